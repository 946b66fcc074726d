package bm25

// This file holds the tokenizer (Scanner, Terms) and the term table that
// interns a batch's terms to local ids.

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// A term is a maximal run of Unicode letters and digits, lower-cased (spec §6).
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

// HasTerm reports whether text holds a term (spec §6: a letter or a digit).
func HasTerm(text string) bool {
	for _, r := range text {
		if r < utf8.RuneSelf {
			if asciiClass[r] != 0 {
				return true
			}
		} else if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return true
		}
	}
	return false
}

// ASCIITerm returns the lower-cased byte of an ASCII letter or digit, or 0
// for a byte that ends a term.
func ASCIITerm(c byte) byte { return asciiClass[c] }

// Scanner cuts text into lower-cased terms; term is valid until the next
// call, and h is its hash (termHash).
type Scanner struct {
	buf []byte
}

// each calls fn with each term of text in order.
func (s *Scanner) Each(text []byte, fn func(term []byte, h uint64)) {
	buf := s.buf[:0]
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
	s.buf = buf
}

// termHash hashes a term eight bytes at a time (terms are short: one or two
// multiplications, where a general hash function would cost a call).
func termHash(b []byte) uint64 {
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

// Terms returns the distinct terms of a query, in first-seen order.
func Terms(text string) []string {
	var s Scanner
	seen := map[string]bool{}
	var out []string
	s.Each([]byte(text), func(term []byte, _ uint64) {
		if !seen[string(term)] {
			seen[string(term)] = true
			out = append(out, string(term))
		}
	})
	return out
}

// TermTable interns terms to dense local ids. A slot holds the id and the
// high bits of the term's hash, so a probe reads the term's bytes only when
// the hashes agree.
type TermTable struct {
	slots  []uint64 // hash>>32<<32 | id+1; 0 when empty
	hashes []uint64 // by id, to grow the table
	starts []uint32 // offsets of each term in arena, by id; one more at the end
	arena  []byte
}

// NewTermTable returns an empty table.
func NewTermTable() *TermTable {
	return &TermTable{slots: make([]uint64, 1<<12), starts: []uint32{0}}
}

// Len is the number of terms interned.
func (t *TermTable) Len() int { return len(t.hashes) }

// Term returns the bytes of the term with local id id.
func (t *TermTable) Term(id int32) []byte { return t.arena[t.starts[id]:t.starts[id+1]] }

// ID returns the local id of term (whose termHash is h), adding it when new.
func (t *TermTable) ID(term []byte, h uint64) int32 {
	mask := uint64(len(t.slots) - 1)
	tag := h &^ 0xffffffff
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.hashes))
			t.slots[i] = tag | uint64(id+1)
			t.hashes = append(t.hashes, h)
			t.arena = append(t.arena, term...)
			t.starts = append(t.starts, uint32(len(t.arena)))
			if len(t.hashes)*2 > len(t.slots) {
				t.grow()
			}
			return id
		}
		if s&^0xffffffff == tag {
			id := int32(s&0xffffffff) - 1
			if string(t.Term(id)) == string(term) {
				return id
			}
		}
	}
}

func (t *TermTable) grow() {
	slots := make([]uint64, len(t.slots)*2)
	mask := uint64(len(slots) - 1)
	for id, h := range t.hashes {
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h&^0xffffffff | uint64(id+1)
	}
	t.slots = slots
}
