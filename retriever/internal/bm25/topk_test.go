package bm25

// This file checks the top-k heap's guess of which offered documents it
// will take (touchKeys), which loads their keys ahead of the offers.

import (
	"math"
	"testing"
)

// TestTouchKeys checks which keys touchKeys loads: those of the documents
// that a heap of scores alone, seeded with the kept hits', would take in
// turn (at or above theta, strictly better than the worst once full), at
// most touchMax, none for a k whose heap keeps a map. Each document's key
// is a bit of its own, so that the sum returned names the documents.
func TestTouchKeys(t *testing.T) {
	s := &Segment{key: make([]uint64, 128)}
	for d := range s.key {
		s.key[d] = 1 << (d % 64)
	}
	docs := func(n int) []uint32 {
		v := make([]uint32, n)
		for i := range v {
			v[i] = uint32(i)
		}
		return v
	}
	bits := func(ds ...int) uint64 {
		var b uint64
		for _, d := range ds {
			b |= 1 << d
		}
		return b
	}
	ascending := make([]float64, 100)
	for i := range ascending {
		ascending[i] = float64(i)
	}
	tests := []struct {
		name   string
		k      int
		kept   []float64 // the heap's hits' scores
		scores []float64 // of documents 0, 1, ...
		theta  float64
		want   uint64
	}{
		{"room, then better than the worst", 2, nil, []float64{1, 3, 2, 0.5}, -1, bits(0, 1, 2)},
		{"full: a tie with the worst is not taken", 2, []float64{2, 5}, []float64{1, 2, 3, 6}, 2, bits(2, 3)},
		{"below theta, none", 2, nil, []float64{1, 3, 2}, 4, 0},
		{"the worst as it rises", 3, []float64{4, 5, 6}, []float64{5, 4.5, 5.5, 5}, 0, bits(0, 2)},
		{"a map's k, none", linearKeysMax + 1, nil, []float64{1, 2}, -1, 0},
		{"none better", 1, []float64{9}, []float64{1, 2, 3}, -1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top := newTopK(tc.k, func(a, b Hit) bool { return a.Doc < b.Doc }, nil, false)
			for i, sc := range tc.kept {
				top.keep(Hit{Score: sc, Doc: uint32(64 + i), seg: s})
			}
			if got := top.touchKeys(s, docs(len(tc.scores)), tc.scores, tc.theta); got != tc.want {
				t.Errorf("loaded the keys %b, want %b", got, tc.want)
			}
		})
	}
	// Every document taken: at most touchMax loaded.
	for d := range s.key {
		s.key[d] = 1
	}
	top := newTopK(5, func(a, b Hit) bool { return a.Doc < b.Doc }, nil, false)
	if got := top.touchKeys(s, docs(len(ascending)), ascending, math.Inf(-1)); got != touchMax {
		t.Errorf("loaded %d keys, want %d", got, touchMax)
	}
	// And the heap is as it was: a guess keeps nothing.
	if len(top.h.hits) != 0 {
		t.Errorf("the heap holds %d hits after touchKeys", len(top.h.hits))
	}
}
