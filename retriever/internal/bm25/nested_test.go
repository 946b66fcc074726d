package bm25

// This file checks SearchNested, a query under two filters in one walk of
// the lists, against two plain searches and against scoring every posting:
// every path, every tie order, k of 1 to 60, and inner filters that narrow
// the outer one group by group (an owner's request without a context, or
// with a scope) and document by document (another conversation).

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// bothFilter accepts the documents that a and b both accept.
type bothFilter struct{ a, b Filter }

func (f bothFilter) Group(seg int, g uint32) Verdict {
	va, vb := f.a.Group(seg, g), f.b.Group(seg, g)
	switch {
	case va == RejectAll || vb == RejectAll:
		return RejectAll
	case va == AcceptAll && vb == AcceptAll:
		return AcceptAll
	}
	return CheckEach
}

func (f bothFilter) Check(seg int, doc, g uint32) bool { return f.Accept(seg, doc, g) }

func (f bothFilter) Accept(seg int, doc, g uint32) bool {
	return f.a.Accept(seg, doc, g) && f.b.Accept(seg, doc, g)
}

// rejectFilter rejects every document.
type rejectFilter struct{}

func (rejectFilter) Group(int, uint32) Verdict       { return RejectAll }
func (rejectFilter) Check(int, uint32, uint32) bool  { return false }
func (rejectFilter) Accept(int, uint32, uint32) bool { return false }

// oddSegFilter rejects, in the even segments only, the groups under 20:
// a verdict that depends on the segment, which a nested search's cached
// verdict must be keyed by.
type oddSegFilter struct{}

func (oddSegFilter) Group(seg int, g uint32) Verdict {
	if seg%2 == 0 && g < 20 {
		return RejectAll
	}
	return AcceptAll
}
func (oddSegFilter) Check(seg int, _, g uint32) bool  { return seg%2 != 0 || g >= 20 }
func (oddSegFilter) Accept(seg int, _, g uint32) bool { return seg%2 != 0 || g >= 20 }

// nestedPairs are outer and inner filters, inner accepting no document
// outer rejects: the outer one accepts all, some groups whole and others a
// document at a time, or rejects long runs of groups; the inner one
// rejects long runs of groups (every record file without a context), most
// groups (a scope), some documents of the groups the outer accepts whole
// (another conversation), or every document.
func nestedPairs() []struct {
	name         string
	outer, inner Filter
} {
	some := groupFilter{
		whole: map[uint32]bool{1: true, 4: true, 7: true},
		each:  func(seg int, doc uint32) bool { return (doc+uint32(seg))%4 != 0 },
	}
	conv := groupFilter{
		whole: map[uint32]bool{0: true, 2: true, 3: true, 5: true, 6: true, 8: true, 9: true},
		each:  func(seg int, doc uint32) bool { return (doc*7+uint32(seg))%3 == 0 },
	}
	out := spanFilter{lo: 30, hi: 45}
	return []struct {
		name         string
		outer, inner Filter
	}{
		{"all/span", acceptAll{}, spanFilter{lo: 0, hi: 60}},
		{"all/most", acceptAll{}, spanFilter{lo: 3, hi: 1 << 30}},
		{"all/conv", acceptAll{}, conv},
		{"some/span-conv", some, bothFilter{some, spanFilter{lo: 10, hi: 70, f: conv}}},
		{"span/conv", out, bothFilter{out, conv}},
		{"all/none", acceptAll{}, rejectFilter{}},
		{"some/same", some, some},
		{"all/by-segment", acceptAll{}, oddSegFilter{}},
	}
}

// TestNestedEqualsTwoSearches: SearchNested gives, on every path, under
// every tie order and at k 1, 5, 10 and 60, exactly the hits of Search
// with the outer filter and of Search with the inner one (scores to the
// last bit, order, ties), and both are scoring every posting's.
func TestNestedEqualsTwoSearches(t *testing.T) {
	pairs := nestedPairs()
	for _, p := range pruningPaths {
		for _, o := range tieOrders {
			t.Run(p.name+"/"+o.name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(11, uint64(len(p.name)*31+len(o.name))))
				ti := newTestIndex()
				ti.tie, ti.groups, ti.docs = o.tie, o.groups, o.docs
				for i, n := range []int{2500, 600, 40, 1800} {
					docs := templatedDocs(r, n, []int{3, 50}[i%2])
					if i == 2 {
						docs = randomDocs(r, n)
					}
					s := ti.add(p.tune.LayerMin, docs...)
					for d := uint32(0); d < uint32(s.Docs()); d += 13 {
						ti.stats.Drop(s.Group(d)%2, s, d, d+1)
					}
				}
				queries := []string{"rate limited retrying", "retrying", "limited attempt w3", "call again", "w0", "w1 w350"}
				for range 6 {
					var words []string
					for range 1 + r.IntN(4) {
						words = append(words, fmt.Sprintf("w%d", int(math.Pow(r.Float64(), 2)*400)))
					}
					queries = append(queries, strings.Join(words, " "))
				}
				for qi, query := range queries {
					for ki, k := range []int{1, 5, 10, 60} {
						part := []int{-1, 0, -1, 1}[(qi+ki)%4]
						for _, pair := range pairs {
							outer, inner := pair.outer, pair.inner
							if part >= 0 {
								outer, inner = partFilter{outer, uint32(part)}, partFilter{inner, uint32(part)}
							}
							gotOuter, gotInner := ti.searchNested(t, p.tune, query, part, k, outer, inner)
							wantOuter := ti.search(t, p.tune, query, part, k, outer)
							wantInner := ti.search(t, p.tune, query, part, k, inner)
							if !slices.Equal(gotOuter, wantOuter) || !slices.Equal(gotInner, wantInner) {
								t.Fatalf("%q part %d k %d %s:\n outer got  %v\n outer want %v\n inner got  %v\n inner want %v",
									query, part, k, pair.name, brief(gotOuter), brief(wantOuter), brief(gotInner), brief(wantInner))
							}
							if brute := ti.bruteForce(query, part, k, outer); !slices.Equal(gotOuter, brute) {
								t.Fatalf("%q part %d k %d %s: outer\n got  %v\n want %v", query, part, k, pair.name, brief(gotOuter), brief(brute))
							}
							if brute := ti.bruteForce(query, part, k, inner); !slices.Equal(gotInner, brute) {
								t.Fatalf("%q part %d k %d %s: inner\n got  %v\n want %v", query, part, k, pair.name, brief(gotInner), brief(brute))
							}
						}
					}
				}
			})
		}
	}
}

// TestNestedInnerAskedOnlyOfOuters: the inner filter is never asked about
// a document the outer filter rejects (Accept, Check), and the two
// searches' answers stay the plain ones when the inner filter would accept
// such documents: SearchNested's contract leaves them out.
func TestNestedInnerAskedOnlyOfOuters(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ti := newTestIndex()
	for _, n := range []int{2000, 900} {
		ti.add(64, templatedDocs(r, n, 3)...)
	}
	outer := spanFilter{lo: 5, hi: 40}
	inner := &outerCheckFilter{f: groupFilter{whole: map[uint32]bool{2: true}, each: func(seg int, doc uint32) bool { return doc%2 == 0 }}, outer: outer}
	for _, k := range []int{1, 5, 10, 60} {
		for _, query := range []string{"rate limited retrying", "retrying", "w0 w1"} {
			ti.searchNested(t, Tuning{LayerMin: 64, PrefillMax: 1 << 10}, query, -1, k, outer, inner)
			if n := inner.wrong.Load(); n > 0 {
				t.Fatalf("%q k %d: the inner filter was asked about %d documents the outer one rejects", query, k, n)
			}
		}
	}
	if inner.asked.Load() == 0 {
		t.Fatal("the inner filter was never asked about a document")
	}
}

// outerCheckFilter is f, counting the documents it is asked about and those of
// them outer rejects.
type outerCheckFilter struct {
	f, outer     Filter
	asked, wrong atomic.Int64 // the halves of a search ask at once
}

func (a *outerCheckFilter) Group(seg int, g uint32) Verdict { return a.f.Group(seg, g) }

func (a *outerCheckFilter) Check(seg int, doc, g uint32) bool { return a.Accept(seg, doc, g) }

func (a *outerCheckFilter) Accept(seg int, doc, g uint32) bool {
	a.asked.Add(1)
	if !a.outer.Accept(seg, doc, g) {
		a.wrong.Add(1)
	}
	return a.f.Accept(seg, doc, g)
}

// searchNested is search under two filters at once (SearchNested).
func (ti *testIndex) searchNested(t testing.TB, tune Tuning, text string, part, k int, outer, inner Filter) (outerHits, innerHits []Hit) {
	t.Helper()
	sr := &Searcher{Tuning: tune}
	outerHits, innerHits, err := sr.SearchNested(context.Background(), ti.segs, &ti.stats, Query{Terms: ti.dict.Lookup(Terms(text)), Part: part, K: k, Groups: ti.groups, DocOrder: ti.docs}, outer, inner, ti.tieOrder())
	if err != nil {
		t.Fatal(err)
	}
	return outerHits, innerHits
}
