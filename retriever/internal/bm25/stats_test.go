package bm25

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sameStats compares two statistics partition by partition.
func sameStats(t *testing.T, a, b *Stats) {
	t.Helper()
	if a.Parts() != b.Parts() {
		t.Fatalf("%d partitions, want %d", b.Parts(), a.Parts())
	}
	for p := range a.Parts() {
		da, ta, dfa := a.Part(p)
		db, tb, dfb := b.Part(p)
		if da != db || ta != tb || !slices.Equal(trimZeros(dfa), trimZeros(dfb)) {
			t.Fatalf("partition %d differs: %d/%d docs, %d/%d terms", p, db, da, tb, ta)
		}
	}
}

// trimZeros drops the zeros that end df (a column covers the ids its
// partition was grown to).
func trimZeros(df []uint32) []uint32 {
	for len(df) > 0 && df[len(df)-1] == 0 {
		df = df[:len(df)-1]
	}
	return df
}

// Decoded statistics equal the encoded ones and score every query alike.
func TestStatsCodecRoundTrip(t *testing.T) {
	ti := codecIndex(t)
	ti.stats.Grow(4) // an empty partition
	got, err := DecodeStats(ti.stats.AppendEncoded(nil))
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, &ti.stats, got)
	decoded := &testIndex{dict: ti.dict, stats: *got, segs: ti.segs, seed: ti.seed}
	tune := DefaultTuning()
	for _, q := range []string{"common", "often loud", "rare17 mid3"} {
		for _, part := range []int{-1, 0, 1} {
			if a, b := ti.search(t, tune, q, part, 10, nil), decoded.search(t, tune, q, part, 10, nil); !reflect.DeepEqual(a, b) {
				t.Errorf("%q in partition %d: decoded %v, want %v", q, part, b, a)
			}
		}
	}
	if _, err := DecodeStats(new(Stats).AppendEncoded(nil)); err != nil {
		t.Errorf("empty statistics: %v", err)
	}
}

// Every cut of an encoding and trailing bytes are refused.
func TestStatsCodecRefusesBadBytes(t *testing.T) {
	ti := newTestIndex()
	ti.add(DefaultLayerMin, testDoc{text: "alpha beta"}, testDoc{text: "beta", part: 1})
	enc := ti.stats.AppendEncoded(nil)
	for n := range len(enc) {
		if _, err := DecodeStats(enc[:n]); err == nil {
			t.Fatalf("a cut at %d of %d bytes decoded", n, len(enc))
		}
	}
	if _, err := DecodeStats(append(slices.Clone(enc), make([]byte, 8)...)); err == nil {
		t.Error("trailing bytes decoded")
	}
}

// FuzzDecodeStats: no input panics the decoder, nor reading what it
// accepts.
func FuzzDecodeStats(f *testing.F) {
	ti := newTestIndex()
	ti.add(DefaultLayerMin, testDoc{text: "alpha beta"}, testDoc{text: "beta", part: 1})
	f.Add(ti.stats.AppendEncoded(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeStats(b)
		if err != nil {
			return
		}
		for p := range st.Parts() {
			st.Part(p)
			st.df(p, 1)
		}
		st.Docs(-1)
		st.df(-1, 0)
		st.Footprint()
	})
}

// Statistics decoded at random points between batches, retractions and
// drops (each write copying a page from the encoded bytes) stay equal to
// statistics that were never encoded, and the encoded bytes unchanged.
func TestStatsReopenedEqualPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	plain, reopened := newTestIndex(), newTestIndex()
	reopened.seed = plain.seed
	var encodings [][]byte
	var parts [][]uint32 // by segment, each document's partition
	for batch := range 30 {
		var docs []testDoc
		words := randomTerms(r, 400+batch*200)
		var part []uint32
		for range 50 + r.IntN(200) {
			n := 1 + r.IntN(12)
			lo := r.IntN(len(words) - n)
			d := testDoc{text: strings.Join(words[lo:lo+n], " "), part: uint32(r.IntN(5))}
			docs = append(docs, d)
			part = append(part, d.part)
		}
		plain.add(DefaultLayerMin, docs...)
		reopened.add(DefaultLayerMin, docs...)
		parts = append(parts, part)
		for range 3 { // retract a document, drop a range, of some segment
			seg := r.IntN(len(plain.segs))
			sa, sb := plain.segs[seg], reopened.segs[seg]
			d := uint32(r.IntN(sa.Docs()))
			terms := docTerms(sa, d)
			plain.stats.Retract(parts[seg][d], sa, d, terms, sa.Len(d))
			reopened.stats.Retract(parts[seg][d], sb, d, terms, sb.Len(d))
			lo := uint32(r.IntN(sa.Docs()))
			hi := min(lo+uint32(r.IntN(4)), uint32(sa.Docs()))
			if lo < hi && sameParts(parts[seg][lo:hi]) {
				plain.stats.Drop(parts[seg][lo], sa, lo, hi)
				reopened.stats.Drop(parts[seg][lo], sb, lo, hi)
			}
		}
		if r.IntN(3) == 0 {
			enc := reopened.stats.AppendEncoded(nil)
			st, err := DecodeStats(enc)
			if err != nil {
				t.Fatal(err)
			}
			reopened.stats = *st
			encodings = append(encodings, enc, slices.Clone(enc))
		}
		sameStats(t, &plain.stats, &reopened.stats)
	}
	sameStats(t, recountStats(plain.segs, parts), &plain.stats)
	for i := 0; i < len(encodings); i += 2 {
		if !slices.Equal(encodings[i], encodings[i+1]) {
			t.Fatalf("encoding %d was written into", i/2)
		}
	}
	if len(encodings) == 0 {
		t.Fatal("never reopened")
	}
	tune := DefaultTuning()
	for _, q := range []string{"error state", "the", "episode agent tool", "x"} {
		for _, part := range []int{-1, 2} {
			if a, b := plain.search(t, tune, q, part, 20, nil), reopened.search(t, tune, q, part, 20, nil); !reflect.DeepEqual(a, b) {
				t.Errorf("%q in partition %d: reopened %v, plain %v", q, part, b, a)
			}
		}
	}
}

// recountStats counts the statistics of the live documents of segs
// (parts: each document's partition, by segment) from their postings.
func recountStats(segs []*Segment, parts [][]uint32) *Stats {
	st := &Stats{}
	for i, s := range segs {
		for d := range uint32(s.Docs()) {
			if !s.Dead(d) {
				st.Grow(parts[i][d])
				st.parts[parts[i][d]].docs++
				st.parts[parts[i][d]].terms += int64(s.Len(d))
			}
		}
		for _, term := range s.Terms() {
			s.EachPosting(term, func(doc, _ uint32) {
				if !s.Dead(doc) {
					c := &st.parts[parts[i][doc]].df
					c.grow(int(term) + 1)
					c.add(term, 1)
				}
			})
		}
	}
	return st
}

// docTerms returns the global terms of document d of s.
func docTerms(s *Segment, d uint32) []uint32 {
	var out []uint32
	for _, term := range s.Terms() {
		s.EachPosting(term, func(doc, _ uint32) {
			if doc == d {
				out = append(out, term)
			}
		})
	}
	return out
}

func sameParts(p []uint32) bool {
	for _, x := range p {
		if x != p[0] {
			return false
		}
	}
	return true
}

// A decoded column holds on the heap only the pages written since (and a
// pointer a page).
func TestStatsDecodedHeapIsTheWrittenPages(t *testing.T) {
	var st Stats
	st.Grow(0)
	st.parts[0].df.grow(10 * dfPage)
	for id := uint32(0); id < 10*dfPage; id++ {
		st.parts[0].df.add(id, 1)
	}
	enc := st.AppendEncoded(nil)
	got, err := DecodeStats(enc)
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Footprint(); n >= dfPage*4 {
		t.Errorf("decoded: %d heap bytes", n)
	}
	got.parts[0].df.sub(3 * dfPage)
	if n := got.Footprint(); n >= 2*dfPage*4 {
		t.Errorf("one write: %d heap bytes", n)
	}
	if got.df(0, 3*dfPage) != 0 || got.df(0, 3*dfPage+1) != 1 || got.df(0, 10*dfPage) != 0 {
		t.Error("a page copied wrong")
	}
}
