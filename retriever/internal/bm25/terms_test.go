package bm25

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
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

// eachPlain is Scanner.Each as it was before its in-place fast path: every
// term lower-cased byte by byte into a buffer. The reference for the
// tokenizer: the index's terms must be exactly its terms.
func eachPlain(text []byte, fn func(term []byte, h uint64)) {
	var buf []byte
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if l := asciiClass[c]; l != 0 {
				buf = append(buf, l)
			} else if len(buf) > 0 {
				fn(buf, termHash(buf))
				buf = buf[:0]
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		i += size
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		} else if len(buf) > 0 {
			fn(buf, termHash(buf))
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		fn(buf, termHash(buf))
	}
}

type scannedTerm struct {
	term string
	h    uint64
}

func scanAll(each func([]byte, func([]byte, uint64)), text []byte) []scannedTerm {
	var out []scannedTerm
	each(text, func(term []byte, h uint64) {
		if want := termHashPlain(term); h != want {
			panic(fmt.Sprintf("term %q given hash %x, want %x", term, h, want))
		}
		out = append(out, scannedTerm{string(term), h})
	})
	return out
}

// checkScannerEqualsPlain: the scanner (reused, as a builder reuses it)
// gives exactly eachPlain's terms, hashes (termHashPlain's) and heads, and
// leaves text unchanged.
func checkScannerEqualsPlain(t *testing.T, s *Scanner, text []byte) {
	t.Helper()
	before := bytes.Clone(text)
	each := func(text []byte, fn func([]byte, uint64)) {
		s.Each(text, func(term []byte, h, head uint64) {
			if want := termHeadPlain(term); head != want {
				panic(fmt.Sprintf("term %q given head %x, want %x", term, head, want))
			}
			fn(term, h)
		})
	}
	got, want := scanAll(each, text), scanAll(eachPlain, text)
	if !slices.Equal(got, want) {
		t.Fatalf("Each(%q) = %v, want %v", text, got, want)
	}
	if !bytes.Equal(text, before) {
		t.Fatalf("Each changed its text: %q, was %q", text, before)
	}
}

func TestScannerEqualsPlain(t *testing.T) {
	var s Scanner
	for _, text := range []string{
		"", "a", "A", "ab", "aB", "Ab", "ab cd", "ab,cd ", " ab", "abc\x00def", "x9 9x 99",
		"hello World", "helloWorld", "hello wORLD!", "résumé", "abcé", "abcÉ", "éabc", "日本語 text",
		"ab\xffcd", "ab\xc3", "\xc3ab", "INFO conv-1 tool_call: rate limited, retrying in 2s",
		"a\u00a0b", "x\u0130y", "ǅungla", "ﬃ", "ab1ﬁx", "end.",
	} {
		checkScannerEqualsPlain(t, &s, []byte(text))
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "z", "Q", "0", " ", ".", "\x00", "é", "É", "日", "\xff", "\xc3", "İ", "\n"}
	for range 20000 {
		var b []byte
		for range r.IntN(30) {
			b = append(b, alphabet[r.IntN(len(alphabet))]...)
		}
		checkScannerEqualsPlain(t, &s, b)
	}
}

// FuzzScanner: whatever the text, the scanner's terms are eachPlain's.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{"hello World", "abcé ÉCOLE x", "ab\x00cd\xffef", "日本語text42"} {
		f.Add([]byte(seed))
	}
	var s Scanner
	f.Fuzz(func(t *testing.T, text []byte) { checkScannerEqualsPlain(t, &s, text) })
}

// termHashPlain and termHeadPlain are termHash and termHead as they were
// before termWords: the last bytes packed one by one. The index's hashes
// are persisted with its dictionary (spec §15), so they must not change.
func termHashPlain(b []byte) uint64 {
	const m1, m2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
	h := uint64(len(b)) * m1
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * m2
		h ^= h >> 29
		b = b[8:]
	}
	if len(b) > 0 {
		var v uint64
		for i, c := range b {
			v |= uint64(c) << (8 * i)
		}
		h = (h ^ v) * m2
	}
	h ^= h >> 32
	h *= m1
	return h ^ h>>29
}

func termHeadPlain(term []byte) uint64 {
	if len(term) >= 8 {
		return binary.LittleEndian.Uint64(term)
	}
	var v uint64
	for i, c := range term {
		v |= uint64(c) << (8 * i)
	}
	return v
}

// checkTermWords: termWords of every stretch of b, whatever b holds after
// it, is the plain hash and head of the stretch's bytes.
func checkTermWords(t *testing.T, b []byte) {
	t.Helper()
	for start := 0; start <= len(b); start++ {
		for end := start; end <= len(b); end++ {
			h, head := termWords(b, start, end)
			term := b[start:end]
			if h != termHashPlain(term) || head != termHeadPlain(term) {
				t.Fatalf("termWords(%q, %d, %d) = %x %x, want %x %x", b, start, end, h, head, termHashPlain(term), termHeadPlain(term))
			}
		}
	}
}

func TestTermWordsEqualsPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		checkTermWords(t, b)
	}
}

// FuzzTermWords: termWords agrees with the plain hash and head.
func FuzzTermWords(f *testing.F) {
	f.Add([]byte("abcdefghijklmnopq"))
	f.Add([]byte("a\x00b\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64 {
			b = b[:64]
		}
		checkTermWords(t, b)
	})
}
