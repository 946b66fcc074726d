package bm25

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLongDocLength checks that a document of more terms than a byte
// counts keeps its length (scores use it) while short ones take a byte.
func TestLongDocLength(t *testing.T) {
	var words []string
	for i := range 400 {
		words = append(words, "w"+strings.Repeat("x", i%7)+string(rune('a'+i%26)))
	}
	long := strings.Join(words, " ")[:1990]
	ti := newTestIndex()
	s := ti.add(DefaultLayerMin, testDoc{text: long}, testDoc{text: "short line here"})
	if got, want := s.Len(0), uint16(len(strings.Fields(long))); got != want || want < longMark {
		t.Fatalf("long document: %d terms, want %d (over %d)", got, want, longMark)
	}
	if got := s.Len(1); got != 3 {
		t.Fatalf("short document: %d terms, want 3", got)
	}
}

// TestDenseTermTF: a dense term's tf is found in every window of pieces,
// tfs of 255 and more included (kept aside), and 1 or 0 elsewhere.
func TestDenseTermTF(t *testing.T) {
	const docs = 5*denseWindow + 17
	want := map[uint32]uint32{}
	var entries []uint64
	for d := uint32(0); d < docs; d++ {
		var tf uint32
		switch {
		case d%7 == 0:
			tf = 0 // not in the piece
		case d%5 == 0:
			tf = 2 + d%300 // some of bigTFMark and more
		case d == denseWindow-1 || d == denseWindow || d == docs-1:
			tf = 1000
		default:
			tf = 1
		}
		if tf == 0 {
			continue
		}
		want[d] = tf
		entries = append(entries, uint64(d)<<logTFBits|uint64(tf))
	}
	dt := newDenseTerm(entries, docs)
	for d := uint32(0); d < docs; d++ {
		if got := dt.tf(d); got != want[d] {
			t.Fatalf("tf(%d) = %d, want %d", d, got, want[d])
		}
		if dt.has(d) != (want[d] > 0) {
			t.Fatalf("has(%d) = %v", d, dt.has(d))
		}
		// The window's bound: its largest tf, or past a byte, any.
		var winMax uint32
		for e := d / denseWindow * denseWindow; e < min((d/denseWindow+1)*denseWindow, docs); e++ {
			winMax = max(winMax, want[e])
		}
		if winMax >= bigTFMark {
			winMax = math.MaxUint16
		}
		if got := dt.windowMaxTF(d); uint32(got) != winMax {
			t.Fatalf("windowMaxTF(%d) = %d, want %d", d, got, winMax)
		}
	}
}

// TestTermIndex: a term is found through the sample whatever its place
// (sampled, between samples, past the last one, about the top samples),
// and an absent one is not.
func TestTermIndex(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 200, 64 * termTopEvery, 64*termTopEvery + 1, 5000} {
		s := &Segment{}
		for i := range n {
			s.terms = append(s.terms, uint32(2*i+1)) // odd ids only
		}
		s.sampleTerms()
		for id := uint32(0); id <= uint32(2*n+2); id++ {
			want := -1
			if id%2 == 1 && int(id/2) < n {
				want = int(id / 2)
			}
			if got := s.termIndex(id); got != want {
				t.Fatalf("%d terms: termIndex(%d) = %d, want %d", n, id, got, want)
			}
		}
	}
}

// TestTermIndexRandom: termIndex, through the top samples and a stretch of
// the samples, finds what a binary search of the whole term column finds,
// for term columns of random gaps and sizes (several top samples and a
// stretch cut short at the end among them).
func TestTermIndexRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 17, 1023, 1024, 1025, 3000, 20000} {
		s := &Segment{}
		id := uint32(r.IntN(3))
		for range n {
			s.terms = append(s.terms, id)
			id += 1 + uint32(r.IntN(1+r.IntN(40)))
		}
		s.sampleTerms()
		if want := (len(s.termSample) + termTopEvery - 1) / termTopEvery; len(s.termTop) != want {
			t.Fatalf("%d terms: %d top samples, want %d", n, len(s.termTop), want)
		}
		for x := uint32(0); x <= id+2; x++ {
			want, found := slices.BinarySearch(s.terms, x)
			if !found {
				want = -1
			}
			if got := s.termIndex(x); got != want {
				t.Fatalf("%d terms: termIndex(%d) = %d, want %d", n, x, got, want)
			}
		}
	}
}

// TestBuilderFull: a full batch refuses documents, leaves none of their
// terms pending, and lays out the documents it took.
func TestBuilderFull(t *testing.T) {
	b := NewBuilder(DefaultLayerMin)
	b.SetMaxDocs(2)
	for i, text := range []string{"apple one", "apple two", "apple three", "pear"} {
		b.Count([]byte(text))
		_, ok := b.Add(uint64(i+1), 0, 0)
		if want := i < 2; ok != want || b.Full() != (i >= 1) {
			t.Fatalf("doc %d: added %v, full %v; want added %v", i, ok, b.Full(), want)
		}
	}
	if b.Docs() != 2 || b.Refused() != 2 || len(b.PendingTerms()) != 0 {
		t.Fatalf("%d docs, %d refused, %d terms pending; want 2, 2, 0", b.Docs(), b.Refused(), len(b.PendingTerms()))
	}
	dict, st := NewDict(), &Stats{}
	global := dict.Assign(b.Terms())
	s := b.Finish(global)
	st.Add(b, global)
	apple := dict.Lookup([]string{"apple"})
	var n int
	s.EachPosting(apple[0], func(_, tf uint32) { n += int(tf) })
	if s.Docs() != 2 || n != 2 || st.Docs(-1) != 2 {
		t.Fatalf("segment of %d docs, %d postings of apple, stats %d docs; want 2, 2, 2", s.Docs(), n, st.Docs(-1))
	}
	// The next batch starts empty, with the same limit.
	nb := b.Next(0)
	for i := range 3 {
		nb.Count([]byte("kiwi"))
		if _, ok := nb.Add(uint64(i), 0, 0); ok != (i < 2) {
			t.Fatalf("next batch, doc %d: added %v", i, ok)
		}
	}
}

// TestImpactOfTFOneFromTable: the layout reads the impact of tf 1 from a
// table by document length; it must be the division it replaced, bit for
// bit, since a list's bounds are the largest impact in it.
func TestImpactOfTFOneFromTable(t *testing.T) {
	dl := []uint16{0, 1, 2, 3, 7, 40, 41, 200, 65535}
	c := newImpactCut(dl, DefaultLayerMin)
	for l := range c.norms {
		if got, want := c.impact1[l], float64(1)/(float64(1)+c.norms[l]); got != want {
			t.Fatalf("length %d: %v, want %v", l, got, want)
		}
	}
}

// TestDeadByCount: a segment with no dead document answers Dead from its
// count; one killed, or given dead bits read back, answers from the bits,
// for every document.
func TestDeadByCount(t *testing.T) {
	s := &Segment{key: make([]uint64, 200), dead: make([]uint64, 4)}
	check := func(what string, dead map[uint32]bool) {
		t.Helper()
		for d := range uint32(200) {
			if s.Dead(d) != dead[d] {
				t.Fatalf("%s: Dead(%d) = %v", what, d, s.Dead(d))
			}
		}
	}
	check("none dead", nil)
	s.dead[1] = 1 << 3 // a bit the count does not know of: not read
	check("bits unread at a count of 0", nil)
	s.dead[1] = 0
	if !s.Kill(70) || s.Kill(70) {
		t.Fatal("Kill(70) twice")
	}
	check("one killed", map[uint32]bool{70: true})
	if err := s.SetDeadBits([]uint64{1, 1 << 6, 0, 1 << 7}); err != nil {
		t.Fatal(err)
	}
	check("bits read back", map[uint32]bool{0: true, 70: true, 199: true})
}
