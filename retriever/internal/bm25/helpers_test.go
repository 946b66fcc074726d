package bm25

// This file holds the engine's test helpers (after zoekt's): an index built
// in memory from literal documents, searched with a filter and a tie order
// of the test's.

import (
	"context"
	"hash/maphash"
	"testing"
)

// testDoc is a literal document: its text, group and partition. Its key is
// its text's hash, unless key is set.
type testDoc struct {
	text        string
	group, part uint32
	key         uint64
}

// testIndex is segments built from literal documents, with their
// dictionary and statistics, as an owner of the engine keeps them.
type testIndex struct {
	dict   *Dict
	stats  Stats
	segs   []*Segment
	seed   maphash.Seed
	tie    TieOrder   // hits of equal score; nil: placeOrder
	groups GroupOrder // the tie order's first keys, or nil
	docs   bool       // the tie order follows the documents' within a group of a segment (Query.DocOrder)
}

func newTestIndex() *testIndex {
	return &testIndex{dict: NewDict(), seed: maphash.MakeSeed()}
}

// add builds one segment of docs (documents of no term are left out, as
// an owner leaves them) and adds it; layerMin is Tuning.LayerMin.
func (ti *testIndex) add(layerMin int, docs ...testDoc) *Segment {
	b := NewBuilder(layerMin)
	for _, d := range docs {
		if b.Count([]byte(d.text)) == 0 {
			continue
		}
		key := d.key
		if key == 0 {
			key = maphash.String(ti.seed, d.text)
		}
		b.Add(key, d.group, d.part)
	}
	global := ti.dict.Assign(b.Terms())
	s := b.Finish(global)
	ti.stats.Add(b, global)
	ti.segs = append(ti.segs, s)
	return s
}

// search runs text over the index with tune, the best k of partition part
// (-1: all) that f accepts (nil: every document), ties in the index's
// order (tieOrder).
func (ti *testIndex) search(t testing.TB, tune Tuning, text string, part, k int, f Filter) []Hit {
	t.Helper()
	if f == nil {
		f = acceptAll{}
	}
	sr := &Searcher{Tuning: tune}
	hits, err := sr.Search(context.Background(), ti.segs, &ti.stats, Query{Terms: ti.dict.Lookup(Terms(text)), Part: part, K: k, Groups: ti.groups, DocOrder: ti.docs}, f, ti.tieOrder())
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// tieOrder is the order of hits of equal score: ti.tie, else placeOrder.
func (ti *testIndex) tieOrder() TieOrder {
	if ti.tie != nil {
		return ti.tie
	}
	return placeOrder
}

// placeOrder orders hits of equal score by segment, then document.
func placeOrder(a, b Hit) bool {
	if a.Seg != b.Seg {
		return a.Seg < b.Seg
	}
	return a.Doc < b.Doc
}

// acceptAll is a Filter that lets every live document be a hit.
type acceptAll struct{}

func (acceptAll) Group(int, uint32) Verdict       { return AcceptAll }
func (acceptAll) Check(int, uint32, uint32) bool  { return true }
func (acceptAll) Accept(int, uint32, uint32) bool { return true }

// groupFilter accepts the documents of some groups whole and asks a
// function about those of others, a document at a time.
type groupFilter struct {
	whole map[uint32]bool
	each  func(seg int, doc uint32) bool
}

func (f groupFilter) Group(_ int, g uint32) Verdict {
	if f.whole[g] {
		return AcceptAll
	}
	return CheckEach
}

func (f groupFilter) Check(seg int, doc, _ uint32) bool { return f.each(seg, doc) }

func (f groupFilter) Accept(seg int, doc, g uint32) bool {
	return f.whole[g] || f.each(seg, doc)
}

// spanFilter rejects whole the groups from lo to hi (hi left out), as an
// owner's rules reject long runs of files (every record file without a
// context, the episodes out of scope), so that whole blocks of a list
// hold no document it may accept; it asks f (nil: every document) about
// the others.
type spanFilter struct {
	lo, hi uint32
	f      Filter
}

func (sf spanFilter) inner() Filter {
	if sf.f == nil {
		return acceptAll{}
	}
	return sf.f
}

func (sf spanFilter) Group(seg int, g uint32) Verdict {
	if g >= sf.lo && g < sf.hi {
		return RejectAll
	}
	return sf.inner().Group(seg, g)
}

func (sf spanFilter) Check(seg int, doc, g uint32) bool { return sf.inner().Check(seg, doc, g) }

func (sf spanFilter) Accept(seg int, doc, g uint32) bool {
	return (g < sf.lo || g >= sf.hi) && sf.inner().Accept(seg, doc, g)
}

// TestInMemorySearch: three documents built in memory and searched, with
// scores computed by hand (BM25 at the documents' average length).
func TestInMemorySearch(t *testing.T) {
	ti := newTestIndex()
	ti.add(DefaultLayerMin,
		testDoc{text: "apple banana"},
		testDoc{text: "apple apple cherry date"},
		testDoc{text: "cherry"},
	)
	hits := ti.search(t, DefaultTuning(), "apple cherry", -1, 10, nil)
	avgdl := 7.0 / 3
	idfApple, idfCherry := IDF(3, 2), IDF(3, 2)
	want := []struct {
		doc   uint32
		score float64
	}{
		{1, Score(idfApple, 2, 4, avgdl) + Score(idfCherry, 1, 4, avgdl)},
		{2, Score(idfCherry, 1, 1, avgdl)},
		{0, Score(idfApple, 1, 2, avgdl)},
	}
	if len(hits) != len(want) {
		t.Fatalf("%d hits, want %d: %+v", len(hits), len(want), hits)
	}
	for i, w := range want {
		if hits[i].Doc != w.doc || hits[i].Score != w.score {
			t.Errorf("hit %d: doc %d score %v, want doc %d score %v", i, hits[i].Doc, hits[i].Score, w.doc, w.score)
		}
	}
}

// TestKeyGivenOnce: of documents of one key, the best only is a hit.
func TestKeyGivenOnce(t *testing.T) {
	ti := newTestIndex()
	ti.add(DefaultLayerMin,
		testDoc{text: "apple", key: 7},
		testDoc{text: "apple pie", key: 7},
		testDoc{text: "apple tart crumble", key: 8},
	)
	hits := ti.search(t, DefaultTuning(), "apple", -1, 10, nil)
	if len(hits) != 2 || hits[0].Doc != 0 || hits[1].Doc != 2 {
		t.Fatalf("hits %+v, want docs 0 and 2", hits)
	}
}

// TestPartitionStats: a query over one partition takes its idf and average
// length from that partition only; the filter keeps its documents only.
func TestPartitionStats(t *testing.T) {
	ti := newTestIndex()
	ti.add(DefaultLayerMin,
		testDoc{text: "apple", group: 0, part: 0},
		testDoc{text: "banana", group: 2, part: 0},
		testDoc{text: "apple apple pear", group: 1, part: 1},
	)
	hits := ti.search(t, DefaultTuning(), "apple", 0, 10, partFilter{part: 0})
	if len(hits) != 1 || hits[0].Doc != 0 || hits[0].Score != Score(IDF(2, 1), 1, 1, 1) {
		t.Fatalf("partition 0: %+v, want doc 0 scored at N=2, df=1, avgdl=1", hits)
	}
	if n := ti.stats.Docs(-1); n != 3 {
		t.Fatalf("%d documents over all partitions, want 3", n)
	}
}

// TestRetractAndDrop: documents killed through the statistics are no hits,
// and the statistics lose them.
func TestRetractAndDrop(t *testing.T) {
	ti := newTestIndex()
	s := ti.add(DefaultLayerMin,
		testDoc{text: "apple one"},
		testDoc{text: "apple two"},
		testDoc{text: "apple three"},
	)
	ti.stats.Retract(0, s, 2, ti.dict.Lookup([]string{"apple", "three"}), 2)
	ti.stats.Retract(0, s, 2, ti.dict.Lookup([]string{"apple", "three"}), 2) // dead already: no change
	ti.stats.Drop(0, s, 0, 1)
	docs, terms, df := ti.stats.Part(0)
	apple := ti.dict.Lookup([]string{"apple"})[0]
	if docs != 1 || terms != 2 || df[apple] != 1 || s.DeadCount() != 2 {
		t.Fatalf("after retract and drop: %d docs, %d terms, df(apple) %d, %d dead; want 1, 2, 1, 2", docs, terms, df[apple], s.DeadCount())
	}
	hits := ti.search(t, DefaultTuning(), "apple", -1, 10, nil)
	if len(hits) != 1 || hits[0].Doc != 1 {
		t.Fatalf("hits %+v, want doc 1 only", hits)
	}
}
