package masking

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestKeywordSet is the differential test of the automaton against a search
// for each keyword in the lower-cased text, on random texts over the
// keywords' own bytes (so that keywords overlap, nest and share suffixes).
func TestKeywordSet(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		var kws []string
		for n := 1 + r.Intn(12); len(kws) < n; {
			kw := randomWord(r, 1+r.Intn(5), "abAB-_.")
			if !slices.Contains(kws, strings.ToLower(kw)) {
				kws = append(kws, strings.ToLower(kw))
			}
		}
		k := newKeywordSet(kws)
		text := randomWord(r, r.Intn(300), "abAB-_. xé")
		var got []occurrence
		got = k.find(text, got)
		var want []occurrence
		lower := strings.ToLower(text) // ASCII only changes: é keeps its bytes
		for end := 1; end <= len(lower); end++ {
			for id, kw := range kws {
				if end >= len(kw) && lower[end-len(kw):end] == kw {
					want = append(want, occurrence{keyword: uint16(id), start: int32(end - len(kw)), end: int32(end)})
				}
			}
		}
		key := func(o occurrence) []int32 { return []int32{o.end, o.start, int32(o.keyword)} }
		cmp := func(a, b occurrence) int { return slices.Compare(key(a), key(b)) }
		slices.SortFunc(got, cmp)
		slices.SortFunc(want, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("keywords %q in %q:\n got %v\nwant %v", kws, text, got, want)
		}
	}
}

func randomWord(r *rand.Rand, n int, alphabet string) string {
	runes := []rune(alphabet)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(runes[r.Intn(len(runes))])
	}
	return b.String()
}
