package mcpserver

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTidySchema(t *testing.T) {
	type inner struct {
		Names []string `json:"names"`
	}
	type ok struct {
		List  []inner `json:"list"`
		Maybe *string `json:"maybe,omitempty"`
		Map   map[string]int
	}
	s, err := schemaFor[ok]()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Properties["list"].Type; got != "array" {
		t.Errorf("a slice: type %q, want array", got)
	}
	if got := s.Properties["list"].Items.Properties["names"].Type; got != "array" {
		t.Errorf("a nested slice: type %q, want array", got)
	}
	if got := s.Properties["maybe"].Type; got != "string" {
		t.Errorf("a pointer: type %q, want string", got)
	}
	type withAny struct {
		Value any `json:"value"`
	}
	if _, err := schemaFor[withAny](); err == nil || !strings.Contains(err.Error(), ".value") {
		t.Errorf("an any field: %v, want an error naming it", err)
	}
}

// TestFairShare checks fairShare against the brute-force largest cut.
func TestFairShare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		lengths := make([]int, r.IntN(8))
		for i := range lengths {
			lengths[i] = r.IntN(60)
		}
		budget := r.IntN(200)
		total := func(c int) int {
			n := 0
			for _, l := range lengths {
				n += min(l, c)
			}
			return n
		}
		want := 0
		for c := 0; c <= 60; c++ {
			if total(c) <= budget {
				want = c
			}
		}
		got := fairShare(lengths, budget)
		if total(got) > budget || min(got, 60) != want {
			t.Fatalf("fairShare(%v, %d) = %d, want %d", lengths, budget, got, want)
		}
	}
}
