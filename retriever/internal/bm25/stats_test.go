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
	sparse := &Stats{}
	sparse.Grow(0)
	sparse.parts[0].df.grow(64)
	sparse.parts[0].df.add(9, 3)
	f.Add(sparse.AppendEncoded(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeStats(b)
		if err != nil {
			return
		}
		for p := range st.Parts() {
			if st.parts[p].df.n < 1<<22 {
				st.Part(p)
			}
			st.df(p, 1)
			st.parts[p].df.grow(2000)
			st.parts[p].df.add(9, 1)
			st.parts[p].df.add(1500, 1)
		}
		ids := 0
		for p := range st.Parts() {
			ids += st.parts[p].df.n
		}
		if ids > 1<<22 {
			return // an encoding of billions of ids: too slow to fuzz
		}
		if _, err := DecodeStats(st.AppendEncoded(nil)); err != nil {
			t.Fatalf("its encoding does not decode: %v", err)
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
			if a, b := hitsOnly(plain.search(t, tune, q, part, 20, nil)), hitsOnly(reopened.search(t, tune, q, part, 20, nil)); !reflect.DeepEqual(a, b) {
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

// A partition with a df for few of the ids is encoded sparse, smaller than
// dense, reads the same, and takes writes (present ids, absent ones, past
// its ids) as the statistics never encoded do.
func TestStatsSparseColumn(t *testing.T) {
	plain := &Stats{}
	plain.Grow(1)
	for i := range plain.parts {
		plain.parts[i].docs, plain.parts[i].terms = 100, 1000
		plain.parts[i].df.grow(5 * dfPage)
	}
	for id := uint32(0); id < 5*dfPage; id++ {
		plain.parts[0].df.add(id, 1+id%3) // dense
		if id%10 == 0 {
			plain.parts[1].df.add(id, 2) // sparse
		}
	}
	enc := plain.AppendEncoded(nil)
	if dense := 8 + 8 + 2*24 + 2*(8+5*dfPage*4); len(enc) >= dense {
		t.Errorf("encoded in %d bytes, dense in %d", len(enc), dense)
	}
	got, err := DecodeStats(enc)
	if err != nil {
		t.Fatal(err)
	}
	if got.parts[0].df.baseIDs != nil || got.parts[1].df.baseIDs == nil {
		t.Fatal("partition 0 should be dense, 1 sparse")
	}
	sameStats(t, plain, got)
	for _, st := range []*Stats{plain, got} {
		st.parts[1].df.sub(2 * dfPage)    // present
		st.parts[1].df.add(2*dfPage+1, 7) // absent, same page
		st.parts[1].df.add(4*dfPage+3, 1) // another page
		st.parts[1].df.grow(6 * dfPage)
		st.parts[1].df.add(6*dfPage-1, 5) // past the encoded ids
	}
	sameStats(t, plain, got)
	for _, id := range []uint32{0, 10, 11, 2 * dfPage, 2*dfPage + 1, 3 * dfPage, 6*dfPage - 1, 6 * dfPage} {
		if a, b := plain.df(1, id), got.df(1, id); a != b {
			t.Errorf("df of %d: %d, want %d", id, b, a)
		}
	}
	again, err := DecodeStats(got.AppendEncoded(nil))
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, plain, again)
}

// A column's df that pass dfWide (a byte's room) and come back under it,
// in pages built on the heap and in pages copied from an encoding (dense
// and sparse), read as a plain table of them does, encode alike, and the
// wide ones leave the wide map when they come back: a differential test
// of the byte pages against a uint32 by id.
func TestStatsWideDFAgainstPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const ids = 3*dfPage + 17
	want := make([]uint32, ids)
	var st Stats
	st.Grow(0)
	c := &st.parts[0].df
	c.grow(ids)
	step := func() {
		id := uint32(r.IntN(ids))
		if r.IntN(4) == 0 {
			id = uint32(r.IntN(8)) // a few ids go far past dfWide and back
		}
		switch {
		case want[id] > 0 && r.IntN(3) == 0:
			c.sub(id)
			want[id]--
		default:
			n := uint32(1 + r.IntN(3))
			if r.IntN(50) == 0 {
				n = dfWide + uint32(r.IntN(300)) // one step across
			}
			c.add(id, n)
			want[id] += n
		}
	}
	check := func(what string, st *Stats) {
		t.Helper()
		for id, w := range want {
			if got := st.df(0, uint32(id)); got != int64(w) {
				t.Fatalf("%s: df of %d is %d, want %d", what, id, got, w)
			}
		}
		_, _, df := st.Part(0)
		if !slices.Equal(df, want) {
			t.Fatalf("%s: its pages differ from the plain table", what)
		}
	}
	for range 20000 {
		step()
	}
	check("built", &st)
	wide := 0
	for _, w := range want {
		if w >= dfWide {
			wide++
		}
	}
	if wide == 0 || len(c.wide) != wide {
		t.Fatalf("%d df kept wide, %d at or past dfWide", len(c.wide), wide)
	}
	// Down under dfWide again: out of the wide map.
	for id := range uint32(8) {
		for want[id] >= dfWide {
			c.sub(id)
			want[id]--
		}
	}
	check("brought down", &st)
	for id := range uint32(8) {
		if _, ok := c.wide[id]; ok {
			t.Fatalf("id %d (df %d) still in the wide map", id, want[id])
		}
	}
	for round := range 4 {
		got, err := DecodeStats(st.AppendEncoded(nil))
		if err != nil {
			t.Fatal(err)
		}
		if sparse := got.parts[0].df.baseIDs != nil; sparse != (round == 2) {
			t.Fatalf("round %d: encoded sparse %v", round, sparse)
		}
		check("decoded", got)
		st = *got
		c = &st.parts[0].df
		for range 3000 {
			step()
		}
		check("written after its decode", &st)
		if round == 1 { // most df gone: the next encoding is sparse
			for id, w := range want {
				if id%16 != 0 {
					for range w {
						c.sub(uint32(id))
					}
					want[id] = 0
				}
			}
		}
	}
}

// A column built on the heap holds about a byte an id it has a page of
// (it held four: issue 33's first index of 100,000 files).
func TestStatsHeapPageIsAByteAnID(t *testing.T) {
	var st Stats
	st.Grow(0)
	st.parts[0].df.grow(64 * dfPage)
	for id := uint32(0); id < 64*dfPage; id += 3 {
		st.parts[0].df.add(id, 1+id%200)
	}
	if n, bound := st.Footprint(), int64(64*dfPage*11/10); n > bound {
		t.Errorf("64 pages of df take %d heap bytes, want at most %d", n, bound)
	}
}

// The statistics' encoding is made at its size once, not grown by doubling
// (twice its size, in each write of the cache entry).
func TestStatsEncodingMadeOnce(t *testing.T) {
	var st Stats
	st.Grow(2)
	for p := range st.parts {
		c := &st.parts[p].df
		c.grow(40 * dfPage)
		for id := uint32(0); id < 40*dfPage; id += uint32(1 + 5*p) { // dense, sparse, sparse
			c.add(id, 1+id%300)
		}
	}
	encodedOnce(t, "dense and sparse", &st)
	// Many sparse partitions of an odd count each: their sections' padding
	// is in the size made room for (an estimate without it fell short and
	// grew the buffer to twice the encoding).
	var odd Stats
	odd.Grow(5000)
	for p := range odd.parts {
		c := &odd.parts[p].df
		c.grow(dfPage)
		for id := uint32(0); id < 3; id++ {
			c.add(id*7, 1)
		}
	}
	encodedOnce(t, "odd sparse partitions", &odd)
}

// encodedOnce checks that st's encoding fills the buffer made for it (one
// grown again would be twice it) and decodes to st.
func encodedOnce(t *testing.T, name string, st *Stats) {
	t.Helper()
	enc := st.AppendEncoded(nil)
	if slack := cap(enc) - len(enc); slack > len(enc)/16 {
		t.Errorf("%s: %d bytes encoded in a buffer of %d", name, len(enc), cap(enc))
	}
	if got, err := DecodeStats(enc); err != nil {
		t.Fatalf("%s: %v", name, err)
	} else {
		sameStats(t, st, got)
	}
}

// TestStatsSparseColumnRank: a sparse column's df found through its rank
// (built at its rankAt-th lookup) are the plain table's, for every id
// and past them, before and after writes that copy pages to the heap.
func TestStatsSparseColumnRank(t *testing.T) {
	plain := &Stats{}
	plain.Grow(0)
	plain.parts[0].docs, plain.parts[0].terms = 100, 1000
	plain.parts[0].df.grow(9 * dfPage)
	for id := uint32(0); id < 9*dfPage; id++ {
		if id%4 == 1 || id%1000 == 0 {
			plain.parts[0].df.add(id, 1+id%5)
		}
	}
	got, err := DecodeStats(plain.AppendEncoded(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := &got.parts[0].df
	if c.baseIDs == nil || c.rank == nil {
		t.Fatal("the column should be sparse, with a rank to build")
	}
	for round := range 3 {
		for id := uint32(0); id < 9*dfPage+2*rankBits; id++ {
			if a, b := plain.df(0, id), got.df(0, id); a != b {
				t.Fatalf("round %d: df of %d: %d, want %d", round, id, b, a)
			}
		}
		if c.rank.rank.Load() == nil {
			t.Fatalf("round %d: no rank built (%d lookups, none %v, %d ids up to %d)", round, c.rank.lookups.Load(), c.rank.none.Load(), len(c.baseIDs), c.baseIDs[len(c.baseIDs)-1])
		}
		for _, st := range []*Stats{plain, got} {
			st.parts[0].df.add(uint32(round*3*dfPage+5), 2) // a page copied to the heap
		}
	}
	if c.heapBytes() < c.rank.bytes() || c.rank.bytes() == 0 {
		t.Fatalf("heap bytes %d leave out the rank's %d", c.heapBytes(), c.rank.bytes())
	}
}
