package bm25

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestClearSeen sets the bits of random lists as exhaustivePairs does and
// checks that clearSeen leaves the whole set clear, for lists few beside the
// set (each word cleared alone) and many (the whole set).
func TestClearSeen(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name        string
		docs, lists int
		per         int // documents a list
	}{
		{"sparse: a rare pair in a large segment", 1 << 20, 2, 40},
		{"sparse: several lists, one document", 1 << 16, 4, 1},
		{"dense: lists as long as the segment", 1 << 12, 2, 3000},
		{"empty lists", 1 << 12, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := make([]uint64, (tc.docs+63)/64)
			lists := make([]decodedTerm, tc.lists)
			total := 0
			for i := range lists {
				docs := make([]uint32, 0, tc.per+1)
				for range tc.per {
					docs = append(docs, uint32(r.IntN(tc.docs)))
				}
				slices.Sort(docs)
				docs = slices.Compact(docs)
				for _, d := range docs {
					seen[d>>6] |= 1 << (d & 63)
				}
				total += len(docs)
				lists[i].docs = append(docs, ^uint32(0)) // the sentinel exhaustivePairs adds
			}
			clearSeen(seen, lists, total)
			if i := slices.IndexFunc(seen, func(w uint64) bool { return w != 0 }); i >= 0 {
				t.Fatalf("word %d of %d left set: %#x", i, len(seen), seen[i])
			}
		})
	}
}
