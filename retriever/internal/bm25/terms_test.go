package bm25

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// checkTableAgainstMap interns terms in a heap table and in a Go map (the
// reference) and checks that both give every term the same id, that each
// id's bytes are its term's, and that a lookup (find) of a term never added
// finds nothing. hash gives each term its hash: termHash, or one that
// makes many terms share a hash, so that only the bytes tell them apart.
func checkTableAgainstMap(t *testing.T, terms [][]byte, hash func([]byte) uint64) {
	t.Helper()
	tab := NewTermTable()
	ref := map[string]int32{}
	for _, term := range terms {
		want, ok := ref[string(term)]
		if !ok {
			want = int32(len(ref))
			ref[string(term)] = want
		}
		if got := tab.ID(term, hash(term)); got != want {
			t.Fatalf("ID(%q) = %d, want %d", term, got, want)
		}
	}
	if tab.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", tab.Len(), len(ref))
	}
	for term, id := range ref {
		if got := tab.Term(id); string(got) != term {
			t.Fatalf("Term(%d) = %q, want %q", id, got, term)
		}
		if got, _ := tab.find([]byte(term), hash([]byte(term))); got != id {
			t.Fatalf("find(%q) = %d, want %d", term, got, id)
		}
		// The same bytes one longer, one shorter, and with the last changed
		// are other terms, unless the reference holds them.
		for _, other := range [][]byte{append([]byte(term), 0), append([]byte(term), 'a'), []byte(term)[:max(len(term)-1, 0)], flipLast([]byte(term))} {
			wantID, known := ref[string(other)]
			got, _ := tab.find(other, hash(other))
			if known && got != wantID || !known && got != -1 {
				t.Fatalf("find(%q) = %d, want %d (known %v)", other, got, wantID, known)
			}
		}
	}
}

func flipLast(b []byte) []byte {
	c := bytes.Clone(b)
	if len(c) > 0 {
		c[len(c)-1] ^= 1
	}
	return c
}

// tableTerms makes terms of every length from 0 to 20 around the heap
// slot's eight-byte head: shared heads, NUL bytes, non-ASCII, repeats.
func tableTerms(r *rand.Rand, n int) [][]byte {
	alphabet := []byte("ab\x00z9é")
	out := make([][]byte, n)
	for i := range out {
		term := make([]byte, r.IntN(21))
		for j := range term {
			term[j] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(4) == 0 && i > 0 {
			term = out[r.IntN(i)] // a repeat
		}
		out[i] = term
	}
	return out
}

// TestTermTableEqualsMap: the heap table's short-term fast path gives the
// ids a map gives, with real hashes and with hashes that collide.
func TestTermTableEqualsMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	terms := tableTerms(r, 20000)
	for _, s := range randomTerms(r, 20000) {
		terms = append(terms, []byte(s))
	}
	t.Run("termHash", func(t *testing.T) { checkTableAgainstMap(t, terms, termHash) })
	// Every term's hash the same but for its length's lowest bit: all probes
	// run long and meet equal tags, so the heads and the arena decide.
	t.Run("colliding", func(t *testing.T) {
		checkTableAgainstMap(t, terms[:3000], func(b []byte) uint64 { return 0xdeadbeef00000000 | uint64(len(b)&1) })
	})
	// The hash's tag bits the same for all, its slot bits their own.
	t.Run("same tag", func(t *testing.T) {
		checkTableAgainstMap(t, terms, func(b []byte) uint64 { return termHash(b) & 0xffffffffff })
	})
}

// FuzzTermTable: whatever terms are interned, the table agrees with a map.
func FuzzTermTable(f *testing.F) {
	f.Add([]byte("the error\x00state abcdefgh abcdefghi abcdefgh\x00 ab ab\x00"), false)
	f.Add([]byte("x xx xxx xxxxxxxx xxxxxxxxx"), true)
	f.Fuzz(func(t *testing.T, data []byte, collide bool) {
		terms := bytes.Split(data, []byte(" "))
		hash := termHash
		if collide {
			hash = func(b []byte) uint64 { return 42 << 40 }
		}
		checkTableAgainstMap(t, terms, hash)
	})
}
