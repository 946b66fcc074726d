package retriever

import (
	"hash/maphash"
	"unicode"
	"unicode/utf8"
)

// Terms are maximal runs of Unicode letters and digits, lower-cased (spec §6).
// The tokenizer and the term table are the indexing hot path: ASCII goes
// through a byte table, and terms are interned in an open-addressing table
// keyed by a hash computed once, so no string is made per token.

// asciiClass[c] is the lower-cased byte of a letter or digit, or 0.
var asciiClass = func() (t [128]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = byte(c)
		t[c-'a'+'A'] = byte(c)
	}
	return t
}()

// termScanner cuts text into lower-cased terms; term is valid until the next call.
type termScanner struct {
	buf []byte
}

// each calls fn with each term of text in order.
func (s *termScanner) each(text []byte, fn func(term []byte)) {
	buf := s.buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if l := asciiClass[c]; l != 0 {
				buf = append(buf, l)
			} else if len(buf) > 0 {
				fn(buf)
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
			fn(buf)
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		fn(buf)
	}
	s.buf = buf
}

// queryTerms returns the distinct terms of a query, in first-seen order.
func queryTerms(text string) []string {
	var s termScanner
	seen := map[string]bool{}
	var out []string
	s.each([]byte(text), func(term []byte) {
		if !seen[string(term)] {
			seen[string(term)] = true
			out = append(out, string(term))
		}
	})
	return out
}

// termTable interns terms to dense local ids.
type termTable struct {
	seed   maphash.Seed
	slots  []int32 // id+1, 0 when empty
	hashes []uint64
	starts []uint32 // offsets of each term in arena
	arena  []byte
}

func newTermTable() *termTable {
	return &termTable{seed: maphash.MakeSeed(), slots: make([]int32, 1<<12)}
}

func (t *termTable) len() int { return len(t.hashes) }

func (t *termTable) term(id int32) []byte {
	end := uint32(len(t.arena))
	if int(id)+1 < len(t.starts) {
		end = t.starts[id+1]
	}
	return t.arena[t.starts[id]:end]
}

// id returns the local id of term, adding it when new.
func (t *termTable) id(term []byte) int32 {
	h := maphash.Bytes(t.seed, term)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.hashes))
			t.slots[i] = id + 1
			t.hashes = append(t.hashes, h)
			t.starts = append(t.starts, uint32(len(t.arena)))
			t.arena = append(t.arena, term...)
			if len(t.hashes)*2 > len(t.slots) {
				t.grow()
			}
			return id
		}
		if t.hashes[s-1] == h && string(t.term(s-1)) == string(term) {
			return s - 1
		}
	}
}

func (t *termTable) grow() {
	slots := make([]int32, len(t.slots)*2)
	mask := uint64(len(slots) - 1)
	for id, h := range t.hashes {
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = int32(id) + 1
	}
	t.slots = slots
}
