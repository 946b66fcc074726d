package bm25

import (
	"reflect"
	"slices"
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
		if da != db || ta != tb || !slices.Equal(dfa, dfb) {
			t.Fatalf("partition %d differs: %d/%d docs, %d/%d terms", p, db, da, tb, ta)
		}
	}
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
