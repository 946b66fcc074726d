package bm25

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// mapDict is the dictionary as a Go map, as it was: the reference the
// table-backed and decoded ones are compared with.
type mapDict struct{ ids map[string]uint32 }

func (m *mapDict) assign(t *TermTable) []uint32 {
	ids := make([]uint32, t.Len())
	for i := range ids {
		term := string(t.Term(int32(i)))
		id, ok := m.ids[term]
		if !ok {
			id = uint32(len(m.ids))
			m.ids[term] = id
		}
		ids[i] = id
	}
	return ids
}

// randomTerms makes n terms that look like a run's: words, numbers,
// hexadecimal ids, long tokens, non-ASCII letters, with repeats.
func randomTerms(r *rand.Rand, n int) []string {
	words := []string{"the", "error", "state", "conversation", "episode", "agent", "tool", "résumé", "日本語", "x"}
	out := make([]string, n)
	for i := range out {
		switch r.IntN(6) {
		case 0:
			out[i] = words[r.IntN(len(words))]
		case 1:
			out[i] = fmt.Sprint(r.IntN(100000))
		case 2:
			out[i] = fmt.Sprintf("%016x", r.Uint64())
		case 3:
			out[i] = strings.Repeat("ab", 1+r.IntN(40))
		case 4:
			out[i] = words[r.IntN(len(words))] + fmt.Sprint(r.IntN(500))
		default:
			out[i] = fmt.Sprintf("w%d", r.IntN(n))
		}
	}
	return out
}

// tableOf interns terms in a builder's term table.
func tableOf(terms []string) *TermTable {
	t := NewTermTable()
	for _, n := range terms {
		t.ID([]byte(n), termHash([]byte(n)))
	}
	return t
}

// A dictionary, encoded and decoded at any point between batches, gives
// every term the id the map gives it, and new terms the next ids.
func TestDictEqualsMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 4 {
		ref := &mapDict{ids: map[string]uint32{}}
		dc := NewDict()
		for batch := range 12 {
			terms := randomTerms(r, 1+r.IntN(3000))
			tab := tableOf(terms)
			if got, want := dc.Assign(tab), ref.assign(tab); !slices.Equal(got, want) {
				t.Fatalf("round %d batch %d: Assign differs from the map", round, batch)
			}
			if batch%(round+2) == 0 { // reopen: the encoding decoded in place
				next, err := DecodeDict(dc.AppendEncoded(nil))
				if err != nil {
					t.Fatal(err)
				}
				dc = next
			}
			sameAsMap(t, dc, ref)
		}
	}
}

func sameAsMap(t *testing.T, dc *Dict, ref *mapDict) {
	t.Helper()
	if dc.Len() != len(ref.ids) {
		t.Fatalf("Len %d, the map %d", dc.Len(), len(ref.ids))
	}
	names := dc.Terms()
	for term, id := range ref.ids {
		if names[id] != term {
			t.Fatalf("term %d is %q, the map's %q", id, names[id], term)
		}
	}
	probe := append(slices.Collect(func(yield func(string) bool) {
		for term := range ref.ids {
			if !yield(term) {
				return
			}
		}
	}), "absent", "", "wabsent")
	got := dc.Lookup(probe)
	var want []uint32
	for _, term := range probe {
		if id, ok := ref.ids[term]; ok {
			want = append(want, id)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatal("Lookup differs from the map")
	}
}

// The sections of a decoded dictionary are the encoded bytes, unchanged by
// the terms assigned later; an empty dictionary and one decoded twice
// round-trip.
func TestDictCodecInPlace(t *testing.T) {
	dc := NewDict()
	if _, err := DecodeDict(dc.AppendEncoded(nil)); err != nil {
		t.Fatalf("an empty dictionary: %v", err)
	}
	dc.Assign(tableOf([]string{"alpha", "beta", "gamma"}))
	enc := dc.AppendEncoded(make([]byte, 8, 64))[8:] // aligned, after another's bytes
	keep := slices.Clone(enc)
	d, err := DecodeDict(enc)
	if err != nil {
		t.Fatal(err)
	}
	if &d.base.arena[0] != &enc[len(enc)-16] {
		t.Error("the terms' bytes were copied, not read in place")
	}
	if got := d.Assign(tableOf([]string{"beta", "delta"})); !slices.Equal(got, []uint32{1, 3}) {
		t.Errorf("Assign after decode: %v", got)
	}
	if !slices.Equal(enc, keep) {
		t.Error("Assign wrote into the encoded bytes")
	}
	again, err := DecodeDict(d.AppendEncoded(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Terms(); !slices.Equal(got, []string{"alpha", "beta", "gamma", "delta"}) {
		t.Errorf("twice decoded: %v", got)
	}
	if _, err := DecodeDict(append([]byte{0}, enc...)[1:]); err != nil {
		t.Errorf("unaligned bytes: %v", err)
	}
}

// Every cut of an encoding, a foreign one and trailing bytes are refused.
func TestDictCodecRefusesBadBytes(t *testing.T) {
	dc := NewDict()
	dc.Assign(tableOf([]string{"alpha", "beta"}))
	enc := dc.AppendEncoded(nil)
	for n := range len(enc) {
		if _, err := DecodeDict(enc[:n]); err == nil {
			t.Fatalf("a cut at %d of %d bytes decoded", n, len(enc))
		}
	}
	if _, err := DecodeDict(append(slices.Clone(enc), make([]byte, 8)...)); err == nil {
		t.Error("trailing bytes decoded")
	}
	if _, err := DecodeDict(NewDict().AppendEncoded(nil)[:4]); err == nil {
		t.Error("a magic alone decoded")
	}
}

// FuzzDecodeDict: no input panics the decoder, nor a lookup, an assignment
// or an encoding of what it accepts.
func FuzzDecodeDict(f *testing.F) {
	dc := NewDict()
	dc.Assign(tableOf([]string{"alpha", "beta", "gamma", "delta"}))
	f.Add(dc.AppendEncoded(nil))
	f.Add(NewDict().AppendEncoded(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDict(b)
		if err != nil {
			return
		}
		d.Lookup([]string{"alpha", "beta", "zeta"})
		names := d.Terms()
		d.Assign(tableOf([]string{"alpha", "omega"}))
		if _, err := DecodeDict(d.AppendEncoded(nil)); err != nil {
			t.Fatalf("its encoding does not decode: %v", err)
		}
		if d.Len() < len(names) {
			t.Fatal("Len shrank")
		}
	})
}
