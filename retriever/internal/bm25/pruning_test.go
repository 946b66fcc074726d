package bm25

// This file checks every pruning path against scoring every posting, at
// the engine's level: random documents in several segments, dead ones
// among them, partitions, keys shared, and a filter that decides some
// groups whole and others a document at a time.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// pruningPaths are tunings that force each way of scoring a query: every
// one must give the hits of scoring every posting, to the last bit.
var pruningPaths = []struct {
	name string
	tune Tuning
}{
	{"default", DefaultTuning()},
	{"split-maxscore", Tuning{LayerMin: 64}},
	{"split-prefill-merge", Tuning{LayerMin: 64, ExhaustiveMax: 1 << 20, ExhaustiveSpread: 8, PrefillMax: 1 << 20}},
	{"merge-all", Tuning{LayerMin: 64, ExhaustiveMax: math.MaxInt, ExhaustiveSpread: 1 << 40}},
	{"unsplit-little-prefill", Tuning{LayerMin: math.MaxInt, PrefillMax: 1 << 10}},
	{"halves", Tuning{LayerMin: 64, PrefillMax: 1 << 10, ParallelMin: 1}},
}

// randomDocs makes n documents of words drawn from a skewed vocabulary, so
// that some terms are in most documents and many in few; groups of a few
// dozen documents, two partitions (a group's partition is its number's
// parity, for partFilter).
func randomDocs(r *rand.Rand, n int) []testDoc {
	docs := make([]testDoc, n)
	for i := range docs {
		words := make([]string, 1+r.IntN(30))
		for j := range words {
			// Squared: word 0 is drawn most, high words rarely.
			w := int(math.Pow(r.Float64(), 3) * 400)
			words[j] = fmt.Sprintf("w%d", w)
		}
		if r.IntN(50) == 0 { // a long document, past a byte of length
			for range 300 {
				words = append(words, fmt.Sprintf("w%d", r.IntN(40)))
			}
		}
		g := uint32(i / 37)
		docs[i] = testDoc{text: strings.Join(words, " "), group: g, part: g % 2}
		if r.IntN(20) == 0 {
			docs[i].key = 1 + uint64(r.IntN(5)) // a few keys shared by several documents
		}
	}
	return docs
}

// TestEveryPathEqualsExhaustive runs random queries over random segments
// with each tuning and compares the hits with bruteForce's.
func TestEveryPathEqualsExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range pruningPaths {
		t.Run(p.name, func(t *testing.T) {
			ti := newTestIndex()
			for _, n := range []int{3000, 700, 50, 2500} {
				s := ti.add(p.tune.LayerMin, randomDocs(r, n)...)
				// Some documents die, as a file read again leaves them.
				for d := uint32(0); d < uint32(s.Docs()); d += 11 {
					ti.stats.Drop(s.Group(d)%2, s, d, d+1)
				}
			}
			some := groupFilter{
				whole: map[uint32]bool{0: true, 3: true, 9: true},
				each:  func(seg int, doc uint32) bool { return (doc+uint32(seg))%3 != 0 },
			}
			// Long runs of groups rejected whole: blocks of lists with no
			// document the filter may accept (left undecoded).
			filters := []Filter{nil, some, spanFilter{lo: 1, hi: 60}, spanFilter{lo: 10, hi: 75, f: some}}
			for qi := range 60 {
				var words []string
				for range 1 + r.IntN(4) {
					words = append(words, fmt.Sprintf("w%d", int(math.Pow(r.Float64(), 2)*400)))
				}
				query := strings.Join(words, " ")
				k := []int{1, 5, 20, 200}[qi%4]
				part := []int{-1, -1, 0, 1}[qi%4]
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
		})
	}
}

// bruteForce scores every posting of the query's terms in every live
// document, with the arithmetic the engine uses (norms, terms added in
// query order), and keeps the best k that f accepts, one a key.
func (ti *testIndex) bruteForce(text string, part, k int, f Filter) []Hit {
	if f == nil {
		f = acceptAll{}
	}
	docs, terms := ti.stats.totals(part)
	if docs == 0 {
		return nil
	}
	avgdl := float64(terms) / float64(docs)
	type term struct {
		id  uint32
		idf float64
	}
	var qs []term
	for _, id := range ti.dict.Lookup(Terms(text)) {
		if df := ti.stats.df(part, id); df > 0 {
			qs = append(qs, term{id, IDF(docs, df)})
		}
	}
	var all []Hit
	for si, s := range ti.segs {
		contrib := map[uint32][]float64{}
		for qi, q := range qs {
			s.EachPosting(q.id, func(doc, tf uint32) {
				if contrib[doc] == nil {
					contrib[doc] = make([]float64, len(qs))
				}
				contrib[doc][qi] = ScoreNorm(q.idf, tf, LengthNorm(uint32(s.Len(doc)), avgdl))
			})
		}
		for d, c := range contrib {
			if s.Dead(d) {
				continue
			}
			if f.Accept(si, d, s.Group(d)) {
				all = append(all, Hit{Score: SumInOrder(c), Seg: si, Doc: d, Group: s.Group(d), seg: s})
			}
		}
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if better(&a, &b, ti.tieOrder()) {
			return -1
		}
		return 1
	})
	var out []Hit
	seen := map[uint64]bool{}
	for _, h := range all {
		if key := h.seg.Key(h.Doc); !seen[key] {
			seen[key] = true
			out = append(out, h)
		}
	}
	return out[:min(k, len(out))]
}

// partFilter keeps f's documents of one partition: a group's partition
// is its number's parity (randomDocs).
type partFilter struct {
	f    Filter
	part uint32
}

func (p partFilter) inner() Filter {
	if p.f == nil {
		return acceptAll{}
	}
	return p.f
}

func (p partFilter) Group(seg int, g uint32) Verdict {
	if g%2 != p.part {
		return RejectAll
	}
	return p.inner().Group(seg, g)
}

func (p partFilter) Check(seg int, doc, g uint32) bool { return p.inner().Check(seg, doc, g) }

func (p partFilter) Accept(seg int, doc, g uint32) bool {
	return g%2 == p.part && p.inner().Accept(seg, doc, g)
}

func brief(hs []Hit) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "(%d/%d %.6g) ", h.Seg, h.Doc, h.Score)
	}
	return b.String()
}

// askedFilter accepts every document and counts what it is asked, by group
// (safe for the halves of a search).
type askedFilter struct{ groups *[3]atomic.Int64 }

func (f askedFilter) Group(_ int, g uint32) Verdict {
	f.groups[g].Add(1)
	return CheckEach
}
func (askedFilter) Check(int, uint32, uint32) bool  { return true }
func (askedFilter) Accept(int, uint32, uint32) bool { return true }

// TestFilterAskedOfMatchedRunsOnly: on every path, the filter is asked
// about the groups of documents a query's terms are in, never about a
// segment's first run when no document of it is (a query meets each
// segment's first file cold, issue 33).
func TestFilterAskedOfMatchedRunsOnly(t *testing.T) {
	for _, p := range pruningPaths {
		t.Run(p.name, func(t *testing.T) {
			ti := newTestIndex()
			for range 3 {
				var docs []testDoc
				for i := range 600 {
					text := fmt.Sprintf("filler w%d", i%50)
					if i >= 400 && i%7 == 0 {
						text += " needle"
					}
					if i >= 200 && i%5 == 0 {
						text += " thread"
					}
					docs = append(docs, testDoc{text: text, group: uint32(i / 200)})
				}
				ti.add(p.tune.LayerMin, docs...)
			}
			for _, q := range []string{"needle", "needle thread", "thread"} {
				for _, k := range []int{1, 5, 10, 60} {
					f := askedFilter{groups: new([3]atomic.Int64)}
					ti.search(t, p.tune, q, -1, k, f)
					if n := f.groups[0].Load(); n > 0 {
						t.Fatalf("%q top %d: group 0, which holds none of its terms, asked %d times", q, k, n)
					}
					if f.groups[2].Load() == 0 {
						t.Fatalf("%q top %d: group 2 never asked", q, k)
					}

				}
			}
		})
	}
}

// laterAskedFilter rejects the first segment whole and counts, of the
// others, how often each group is asked about.
type laterAskedFilter struct{ groups *[3]atomic.Int64 }

func (f laterAskedFilter) Group(seg int, g uint32) Verdict {
	if seg == 0 {
		return RejectAll
	}
	f.groups[g].Add(1)
	return CheckEach
}
func (laterAskedFilter) Check(seg int, _, _ uint32) bool  { return seg != 0 }
func (laterAskedFilter) Accept(seg int, _, _ uint32) bool { return seg != 0 }

// TestNestedInnerAskedOfMatchedRunsOnly: a nested search's inner filter,
// whose look-ahead cursors skip the blocks only it could take once they
// cannot reach the outer heap, is not asked about a segment's first run
// when no document of it holds the query's terms either. The first
// segment's documents hold them thrice and fill the outer heap, which the
// inner filter rejects, so that every later block is below the outer
// heap's floor and above the inner one's.
func TestNestedInnerAskedOfMatchedRunsOnly(t *testing.T) {
	for _, p := range pruningPaths {
		t.Run(p.name, func(t *testing.T) {
			ti := newTestIndex()
			for seg := range 3 {
				var docs []testDoc
				for i := range 600 {
					text := fmt.Sprintf("filler w%d", i%50)
					switch {
					case i >= 400 && i%7 == 0 && seg == 0:
						text += " needle needle needle thread thread"
					case i >= 400 && i%7 == 0:
						text += " needle thread and some more words to make it long"
					}
					docs = append(docs, testDoc{text: text, group: uint32(i / 200)})
				}
				ti.add(p.tune.LayerMin, docs...)
			}
			for _, q := range []string{"needle", "needle thread"} {
				for _, k := range []int{1, 5, 10} {
					inner := laterAskedFilter{groups: new([3]atomic.Int64)}
					ti.searchNested(t, p.tune, q, -1, k, acceptAll{}, inner)
					if n := inner.groups[0].Load(); n > 0 {
						t.Fatalf("%q top %d: group 0, which holds none of its terms, asked of the inner filter %d times", q, k, n)
					}
				}
			}
		})
	}
}
