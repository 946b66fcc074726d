package bm25

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// codecIndex builds segments with every kind of term: rare ones, split
// ones (many postings), dense ones (in more than 1/denseFraction of the
// documents, past skipEvery), long documents (longDL) and big tfs (bigTF).
func codecIndex(t testing.TB) *testIndex {
	t.Helper()
	ti := newTestIndex()
	for seg := range 3 {
		var docs []testDoc
		for i := range 3000 {
			words := []string{"common", fmt.Sprintf("rare%d", i), fmt.Sprintf("mid%d", i%40), fmt.Sprintf("seg%d", seg)}
			if i%3 == 0 {
				words = append(words, "often")
			}
			for j := range i % 23 { // lengths that differ: impacts that differ, split terms
				words = append(words, fmt.Sprintf("pad%d", j))
			}
			if i%31 == 0 {
				words = append(words, "common", "common", "often")
			}
			if i%500 == 0 {
				words = append(words, strings.Repeat("loud ", 300+i%7)) // a big tf, a long document
			}
			docs = append(docs, testDoc{text: strings.Join(words, " "), group: uint32(i / 100), part: uint32(i % 2)})
		}
		docs = append(docs, testDoc{text: "   "}) // no term: left out
		ti.add(64, docs...)
	}
	return ti
}

// A decoded segment answers every query as the segment it was encoded from,
// and holds the same documents, terms and postings.
func TestSegmentCodecRoundTrip(t *testing.T) {
	ti := codecIndex(t)
	var dense, split, long int
	for _, s := range ti.segs {
		dense += s.dense.Len()
		split += s.layers.Len()
		long += s.longDL.Len()
	}
	if dense == 0 || split == 0 || long == 0 {
		t.Fatalf("the index lacks a kind of term: %d dense, %d split, %d long documents", dense, split, long)
	}
	decoded := &testIndex{dict: ti.dict, stats: ti.stats, seed: ti.seed}
	for _, s := range ti.segs {
		enc := s.AppendEncoded(nil)
		d, err := DecodeSegment(enc)
		if err != nil {
			t.Fatal(err)
		}
		sameSegment(t, s, d)
		decoded.segs = append(decoded.segs, d)
	}
	tune := DefaultTuning()
	tune.LayerMin = 64
	for _, q := range []string{"common", "often", "loud", "rare17", "mid3 often", "common often loud", "seg1 mid7", "rare2999 loud", "absent"} {
		for _, k := range []int{1, 10, 1000} {
			want := hitsOnly(ti.search(t, tune, q, -1, k, nil))
			got := hitsOnly(decoded.search(t, tune, q, -1, k, nil))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q top %d: decoded %v, want %v", q, k, got, want)
			}
		}
	}
}

// sameSegment compares two segments column by column (empty and nil alike).
func sameSegment(t *testing.T, a, b *Segment) {
	t.Helper()
	if a.Docs() != b.Docs() || a.DeadCount() != b.DeadCount() || a.refAvgdl != b.refAvgdl || !slices.Equal(a.Terms(), b.Terms()) {
		t.Fatalf("segments differ: %d/%d docs, %d/%d dead, avgdl %v/%v", a.Docs(), b.Docs(), a.DeadCount(), b.DeadCount(), a.refAvgdl, b.refAvgdl)
	}
	for d := range uint32(a.Docs()) {
		if a.Key(d) != b.Key(d) || a.Len(d) != b.Len(d) || a.Group(d) != b.Group(d) || a.Dead(d) != b.Dead(d) {
			t.Fatalf("document %d differs", d)
		}
	}
	for _, term := range a.Terms() {
		var pa, pb [][2]uint32
		a.EachPosting(term, func(doc, tf uint32) { pa = append(pa, [2]uint32{doc, tf}) })
		b.EachPosting(term, func(doc, tf uint32) { pb = append(pb, [2]uint32{doc, tf}) })
		if !slices.Equal(pa, pb) {
			t.Fatalf("term %d's postings differ", term)
		}
	}
}

// Decoding reads the bytes in place, or a copy when they are not aligned;
// Kill writes a copy of the dead bits, never the encoded bytes.
func TestSegmentCodecInPlace(t *testing.T) {
	ti := codecIndex(t)
	s := ti.segs[0]
	s.Kill(5)
	enc := s.AppendEncoded(nil)
	keep := slices.Clone(enc)
	d, err := DecodeSegment(enc)
	if err != nil {
		t.Fatal(err)
	}
	if &d.post[0] != &enc[indexOf(t, enc, s.post)] {
		t.Error("the postings were copied, not read in place")
	}
	if !d.Dead(5) || d.DeadCount() != 1 {
		t.Errorf("dead: %v, %d", d.Dead(5), d.DeadCount())
	}
	d.Kill(6)
	if !slices.Equal(enc, keep) {
		t.Error("Kill wrote into the encoded bytes")
	}
	odd := append([]byte{0}, enc...)[1:] // off by one byte from the allocation's alignment
	u, err := DecodeSegment(odd)
	if err != nil {
		t.Fatal(err)
	}
	sameSegment(t, s, u)
}

// indexOf finds where part's bytes begin in whole.
func indexOf(t *testing.T, whole, part []byte) int {
	t.Helper()
	for i := 0; i+len(part) <= len(whole); i += sectionAlign {
		if slices.Equal(whole[i:i+len(part)], part) {
			return i
		}
	}
	t.Fatal("postings not found in the encoding")
	return 0
}

// Every cut of an encoding, and a foreign one, is refused, never a panic.
func TestSegmentCodecRefusesBadBytes(t *testing.T) {
	ti := newTestIndex()
	s := ti.add(DefaultLayerMin, testDoc{text: "alpha beta"}, testDoc{text: "beta gamma"})
	enc := s.AppendEncoded(nil)
	for n := range len(enc) {
		if _, err := DecodeSegment(enc[:n]); err == nil {
			t.Fatalf("a cut at %d of %d bytes decoded", n, len(enc))
		}
	}
	bad := slices.Clone(enc)
	bad[0] = 'X'
	if _, err := DecodeSegment(bad); err == nil {
		t.Error("a foreign magic decoded")
	}
	if _, err := DecodeSegment(append(slices.Clone(enc), make([]byte, 8)...)); err == nil {
		t.Error("trailing bytes decoded")
	}
}

// FuzzDecodeSegment: no input panics the decoder, and what it accepts has
// the shape every lookup relies on.
func FuzzDecodeSegment(f *testing.F) {
	ti := newTestIndex()
	s := ti.add(2, testDoc{text: "alpha beta alpha"}, testDoc{text: "beta gamma"}, testDoc{text: "beta beta beta delta"})
	f.Add(s.AppendEncoded(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeSegment(b)
		if err != nil {
			return
		}
		if err := d.checkShape(); err != nil {
			t.Fatalf("accepted a segment of a bad shape: %v", err)
		}
		for doc := range uint32(d.Docs()) {
			d.Len(doc)
			d.Group(doc)
			d.Dead(doc)
		}
	})
}

// Dead bits stored beside a segment's blob are given back whole, and only
// bits that keep every document dead when encoded dead, within the
// segment, are taken.
func TestSegmentSetDeadBits(t *testing.T) {
	s := codecIndex(t).segs[0]
	s.Kill(3)
	d, err := DecodeSegment(s.AppendEncoded(nil))
	if err != nil {
		t.Fatal(err)
	}
	later := slices.Clone(d.DeadBits())
	later[0] |= 1 << 5
	if err := d.SetDeadBits(later); err != nil || !d.Dead(5) || !d.Dead(3) || d.DeadCount() != 2 {
		t.Fatalf("set: %v, dead 5 %v, dead 3 %v, count %d", err, d.Dead(5), d.Dead(3), d.DeadCount())
	}
	alive := slices.Clone(later)
	alive[0] &^= 1 << 3
	if err := d.SetDeadBits(alive); err == nil {
		t.Error("a dead document came alive")
	}
	if err := d.SetDeadBits(later[1:]); err == nil {
		t.Error("too few words taken")
	}
	if r := d.Docs() % 64; r != 0 {
		past := slices.Clone(later)
		past[len(past)-1] |= 1 << 63
		if err := d.SetDeadBits(past); err == nil {
			t.Error("a bit past the last document taken")
		}
	}
}

// SectionSize is what PutSection writes, whatever the values' size and
// count; Grow then makes room once.
func TestSectionSizeIsWhatIsWritten(t *testing.T) {
	e := NewSectionEncoder(nil)
	check := func(n, want int) {
		t.Helper()
		if n != want {
			t.Fatalf("SectionSize %d, PutSection wrote %d", want, n)
		}
	}
	for _, k := range []int{0, 1, 3, 7, 8, 9, 1000} {
		at := len(e.Bytes())
		PutSection(e, make([]byte, k))
		check(len(e.Bytes())-at, SectionSize(make([]byte, k)))
		at = len(e.Bytes())
		PutSection(e, make([]uint16, k))
		check(len(e.Bytes())-at, SectionSize(make([]uint16, k)))
		at = len(e.Bytes())
		PutSection(e, make([]statsHead, k))
		check(len(e.Bytes())-at, SectionSize(make([]statsHead, k)))
	}
	before := cap(e.Bytes())
	e.Grow(1 << 20)
	if cap(e.Bytes())-len(e.Bytes()) < 1<<20 || cap(e.Bytes()) == before {
		t.Fatal("Grow made no room")
	}
}

// A term column whose last id is past the segment's terms is refused at the
// decode: a rank of its ids (termrank.go) would be as large as that id
// (1<<31: some 300 MB), where every valid id is a term's.
func TestSegmentCodecRefusesTermIDPastTerms(t *testing.T) {
	ti := codecIndex(t)
	for _, s := range ti.segs {
		if s.dense.Len() == 0 || s.layers.Len() == 0 {
			continue
		}
		for _, c := range []struct {
			name string
			grow func(d *Segment)
		}{
			{"dense", func(d *Segment) {
				d.dense.docs = append(slices.Clone(d.dense.docs), 1<<31)
				d.dense.vals = append(slices.Clone(d.dense.vals), d.dense.vals[0])
			}},
			{"split", func(d *Segment) {
				d.layers.docs = append(slices.Clone(d.layers.docs), uint32(len(d.terms)))
				d.layers.vals = append(slices.Clone(d.layers.vals), d.layers.vals[0])
			}},
		} {
			d, err := DecodeSegment(s.AppendEncoded(nil))
			if err != nil {
				t.Fatal(err)
			}
			c.grow(d)
			if _, err := DecodeSegment(d.AppendEncoded(nil)); err == nil {
				t.Errorf("%s: a column id past the %d terms decoded", c.name, len(d.terms))
			}
		}
		return
	}
	t.Fatal("no segment with dense and split terms")
}

// A search that asks for no hit (K < 1) answers none: the heaps are made
// for K hits (the retriever refuses such a topK before).
func TestSearchNoHitAsked(t *testing.T) {
	ti := codecIndex(t)
	for _, k := range []int{0, -1} {
		outer, inner := ti.searchNested(t, DefaultTuning(), "common rare7", -1, k, nil, nil)
		if outer != nil || inner != nil {
			t.Errorf("K=%d: %v, %v; want nothing", k, outer, inner)
		}
	}
}
