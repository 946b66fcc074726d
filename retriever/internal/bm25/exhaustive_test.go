package bm25

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestPairsLeaveSeenClear asks rare pairs of one Searcher, each walked by
// exhaustivePairs in a large segment (the first segment's documents, which
// hold both words of each pair many times, set a threshold that neither
// word alone reaches there), and checks after each that the bit set its
// scratch keeps for the next query is clear, and that the hits are
// bruteForce's: a bit left set counts a document as a second sighting in a
// later query, which TestClearSeen alone cannot see at the call.
func TestPairsLeaveSeenClear(t *testing.T) {
	ti := newTestIndex()
	pairs := [][2]string{{"alpha", "beta"}, {"gamma", "delta"}, {"alpha", "delta"}}
	var strong []testDoc
	for i, p := range pairs {
		for j := range 8 { // each its own text: hits of one key are given once
			strong = append(strong, testDoc{text: strings.Repeat(p[0]+" "+p[1]+" ", 3) + fmt.Sprintf("s%d", j), group: uint32(i)})
		}
	}
	ti.add(math.MaxInt, strong...)
	r := rand.New(rand.NewPCG(5, 6))
	big := make([]testDoc, 40_000)
	for i := range big {
		big[i] = testDoc{text: fmt.Sprintf("filler%d common words here", r.IntN(500)), group: uint32(10 + i/100)}
	}
	for i := 0; i < 12; i++ { // each word in a few documents, some holding a pair
		p := pairs[i%len(pairs)]
		big[r.IntN(len(big))].text += " " + p[0] + " long tail of words that lowers the score"
		big[r.IntN(len(big))].text += " " + p[1] + " long tail of words that lowers the score"
		big[r.IntN(len(big))].text += " " + p[0] + " " + p[1] + " and more words after them"
	}
	ti.add(math.MaxInt, big...)
	// The segments one after the other (not in halves side by side): the
	// first's bound must be set when the second is walked.
	sr := &Searcher{Tuning: Tuning{LayerMin: math.MaxInt, ExhaustiveMax: 1 << 20, ExhaustiveSpread: 1 << 20, ParallelMin: math.MaxInt}}
	checked := 0
	for round := range 3 {
		for _, p := range pairs {
			text := p[0] + " " + p[1]
			q := Query{Terms: ti.dict.Lookup(Terms(text)), Part: -1, K: 5, Groups: ti.groups, DocOrder: ti.docs}
			got, err := sr.Search(context.Background(), ti.segs, &ti.stats, q, acceptAll{}, ti.tieOrder())
			if err != nil {
				t.Fatal(err)
			}
			if want := ti.bruteForce(text, -1, 5, acceptAll{}); !slices.Equal(got, want) {
				t.Fatalf("round %d %q:\n got  %v\n want %v", round, text, brief(got), brief(want))
			}
			// The scratch the query put back, when the pool keeps it (under
			// the race detector it drops some).
			s := sr.getScratch()
			if s.seen != nil {
				checked++
				if i := slices.IndexFunc(s.seen, func(w uint64) bool { return w != 0 }); i >= 0 {
					t.Fatalf("round %d %q: word %d of the bit set left set: %#x", round, text, i, s.seen[i])
				}
			}
			sr.putScratch(s)
		}
	}
	if checked == 0 {
		t.Fatal("no query's scratch held exhaustivePairs' bit set: the pairs were not walked by it")
	}
}
