package bm25

// This file checks queries whose best documents tie by the thousand, as a
// log's templated lines do (a warning written again and again with other
// numbers): every pruning path against scoring every posting, under tie
// orders that do and do not follow the documents' order; and a benchmark of
// such a query.

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// templatedDocs is randomDocs with every every-th document a templated
// warning: the same words but for two numbers, so that most of them score
// exactly alike, and some texts (keys) repeat. Every third makes the
// templated words frequent (prefill, MaxScore); every 50th, rare (the
// exhaustive paths).
func templatedDocs(r *rand.Rand, n, every int) []testDoc {
	docs := randomDocs(r, n)
	for i := 0; i < n; i += every {
		text := fmt.Sprintf("tool call rate limited attempt %d retrying in %ds", 1+r.IntN(9), []int{1, 2, 4, 8, 16, 30, 60}[r.IntN(7)])
		if r.IntN(10) == 0 {
			text = fmt.Sprintf("rate limited again retrying in %ds w%d", 1+r.IntN(60), r.IntN(400))
		}
		docs[i].text, docs[i].key = text, 0
	}
	return docs
}

// tieOrders are orders of equal scores that the scoring paths must keep
// whatever they are: the documents' own order, its reverse, and one by
// group first that the documents' order does not follow, asked alone and
// with its groups' part as a GroupOrder (which decides for most pairs of
// groups, not all: the hash below collides); and two that follow the
// documents' order within a group of a segment, claimed as Query.DocOrder:
// one that does only there (later segments first), with and without its
// GroupOrder, and one by group, then place (as an owner whose merges keep
// the place order has it).
var tieOrders = []struct {
	name   string
	tie    TieOrder
	groups GroupOrder
	docs   bool // Query.DocOrder
	// bySegment: the order of two documents of one group in two segments
	// is not the one that a merge of the segments in order gives them.
	bySegment bool
}{
	{"place", placeOrder, nil, false, false},
	{"reverse", func(a, b Hit) bool { return placeOrder(b, a) }, nil, false, false},
	{"group", groupFirst, nil, false, false},
	{"group-order", groupFirst, groupHashOrder, false, false},
	{"doc-order", groupThenDocs, nil, true, true},
	{"group-doc-order", groupThenDocs, groupHashOrder, true, true},
	{"group-place-doc-order", groupThenPlace, groupHashOrder, true, false},
}

// groupThenPlace orders by groupHash, then in place order.
func groupThenPlace(a, b Hit) bool {
	if ga, gb := groupHash(a.Group), groupHash(b.Group); ga != gb {
		return ga < gb
	}
	return placeOrder(a, b)
}

// groupHashOrder is groupFirst's and groupThenDocs' GroupOrder.
func groupHashOrder(a, b uint32) int { return cmp.Compare(groupHash(a), groupHash(b)) }

// groupThenDocs orders by groupHash, then later segments first, then by
// document: it agrees with the documents' order within a group of a
// segment only (Query.DocOrder), and a group's documents are in several
// segments.
func groupThenDocs(a, b Hit) bool {
	if ga, gb := groupHash(a.Group), groupHash(b.Group); ga != gb {
		return ga < gb
	}
	if a.Seg != b.Seg {
		return a.Seg > b.Seg
	}
	return a.Doc < b.Doc
}

// groupHash is groupFirst's first key.
func groupHash(g uint32) uint32 { return g * 2654435761 % 97 }

// groupFirst orders by groupHash, then in reverse place order.
func groupFirst(a, b Hit) bool {
	if ga, gb := groupHash(a.Group), groupHash(b.Group); ga != gb {
		return ga < gb
	}
	return placeOrder(b, a)
}

// TestTiesEqualExhaustive: queries of the templated words, whose best
// documents tie by the hundred, give on every path and under every tie
// order the hits of scoring every posting.
func TestTiesEqualExhaustive(t *testing.T) {
	queries := []string{"rate limited retrying", "rate limited", "retrying", "limited attempt w3", "rate w0 w1", "call again"}
	for _, p := range pruningPaths {
		for _, o := range tieOrders {
			t.Run(p.name+"/"+o.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(3, 4))
				ti := newTestIndex()
				ti.tie, ti.groups, ti.docs = o.tie, o.groups, o.docs
				for i, n := range []int{2000, 600, 40, 1500, 3000} {
					s := ti.add(p.tune.LayerMin, templatedDocs(r, n, []int{3, 50}[i%2])...)
					for d := uint32(0); d < uint32(s.Docs()); d += 13 {
						ti.stats.Drop(s.Group(d)%2, s, d, d+1)
					}
				}
				some := groupFilter{
					whole: map[uint32]bool{1: true, 4: true},
					each:  func(seg int, doc uint32) bool { return (doc+uint32(seg))%4 != 0 },
				}
				filters := []Filter{nil, some, spanFilter{lo: 0, hi: 50}, spanFilter{lo: 8, hi: 70, f: some}}
				for qi, query := range queries {
					for ki, k := range []int{1, 5, 10, 60} {
						part := []int{-1, 0, -1, 1}[(qi+ki)%4]
						for fi, f := range filters {
							if part >= 0 {
								f = partFilter{f, uint32(part)}
							}
							got := ti.search(t, p.tune, query, part, k, f)
							want := ti.bruteForce(query, part, k, f)
							if !slices.Equal(got, want) {
								t.Fatalf("%q part %d k %d filter %d:\n got  %v\n want %v", query, part, k, fi, brief(got), brief(want))
							}
						}
					}
				}
			})
		}
	}
}

// BenchmarkTies: a query of the templated words at top 5 and 10 over
// eight segments of 100,000 documents, one in 50 templated: some 16,000
// documents tie for the best score, in a few thousand postings a segment,
// as a rate-limit warning among a run's records. "serial" searches the segments
// in one goroutine, whose instructions callgrind counts whole.
func BenchmarkTies(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	ti := newTestIndex()
	for range 8 {
		ti.add(DefaultLayerMin, templatedDocs(r, 100000, 50)...)
	}
	serial := DefaultTuning()
	serial.ParallelMin = math.MaxInt
	for _, tune := range []struct {
		name string
		t    Tuning
	}{{"", DefaultTuning()}, {"serial-", serial}} {
		sr := &Searcher{Tuning: tune.t}
		for _, k := range []int{5, 10} {
			q := Query{Terms: ti.dict.Lookup(Terms("rate limited retrying")), Part: -1, K: k}
			b.Run(fmt.Sprintf("%stop%d", tune.name, k), func(b *testing.B) {
				for b.Loop() {
					if _, err := sr.Search(b.Context(), ti.segs, &ti.stats, q, acceptAll{}, placeOrder); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestMergeRuns: ascending runs, some empty, with documents in several,
// merged into their distinct documents ascending, the buffers reused.
func TestMergeRuns(t *testing.T) {
	var bufs [2][]uint32
	for _, c := range []struct {
		runs [][]uint32
		want []uint32
	}{
		{nil, nil},
		{[][]uint32{{}, {}}, nil},
		{[][]uint32{{1, 5, 9}}, []uint32{1, 5, 9}},
		{[][]uint32{{}, {2, 4}, {}}, []uint32{2, 4}},
		{[][]uint32{{1, 5, 9}, {0, 5, 10}}, []uint32{0, 1, 5, 9, 10}},
		{[][]uint32{{3}, {1, 3}, {3, 7}, {2, 3, 8}}, []uint32{1, 2, 3, 7, 8}},
		{[][]uint32{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, []uint32{1, 2, 3}},
	} {
		var flat []uint32
		var ends []int
		for _, r := range c.runs {
			flat = append(flat, r...)
			ends = append(ends, len(flat))
		}
		if got := mergeRuns(flat, ends, &bufs); !slices.Equal(got, c.want) {
			t.Errorf("mergeRuns(%v) = %v, want %v", c.runs, got, c.want)
		}
	}
}
