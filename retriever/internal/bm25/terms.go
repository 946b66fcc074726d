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

// lowerTerm[c] reports whether byte c is an ASCII letter or digit that is
// its own lower case: a term of such bytes only is its text's bytes.
var lowerTerm = func() (t [256]bool) {
	for c := range asciiClass {
		t[c] = c != 0 && asciiClass[c] == byte(c)
	}
	return t
}()

// Scanner cuts text into lower-cased terms; term is valid until the next
// call, h is its hash (termHash) and head its first eight bytes (termHead).
type Scanner struct {
	buf []byte
}

// Kinds of a byte for the scanner: one that ends a term, an ASCII letter or
// digit that is its own lower case, an ASCII upper-case letter, and a byte
// of a rune beyond ASCII.
const (
	kindSep = iota
	kindLower
	kindUpper
	kindHigh
)

var byteKind = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = kindHigh
		case lowerTerm[c]:
			t[c] = kindLower
		case asciiClass[c] != 0:
			t[c] = kindUpper
		}
	}
	return t
}()

// Each calls fn with each term of text in order. A term of lower-case
// ASCII letters and digits only (most are) is passed as a slice of text,
// with no copy, and hashed eight bytes a load; others are lower-cased into
// the scanner's buffer.
func (s *Scanner) Each(text []byte, fn func(term []byte, h, head uint64)) {
	for i := 0; ; {
		term, h, head, end := s.next(text, i)
		if term == nil {
			return
		}
		fn(term, h, head)
		i = end
	}
}

// next returns the first term of text at or after i, its hash and head,
// and where it ends; term is nil when there is none. The builder calls it
// in a loop of its own (Builder.Count), where Each's callback cost a call
// through a closure a token.
func (s *Scanner) next(text []byte, i int) (term []byte, h, head uint64, end int) {
	n := len(text)
	for {
		for i < n && byteKind[text[i]] == kindSep {
			i++
		}
		if i == n {
			return nil, 0, 0, n
		}
		buf := s.buf[:0]
		if byteKind[text[i]] == kindLower {
			start := i
			for i++; i < n && byteKind[text[i]] == kindLower; i++ {
			}
			if i == n || byteKind[text[i]] == kindSep {
				if l := i - start; l < 8 {
					// Most terms, without termWords' call: a word, one
					// multiplication.
					head = lastWord(text, start, i)
					return text[start:i], shortHash(l, head), head, i
				}
				h, head = termWords(text, start, i)
				return text[start:i], h, head, i
			}
			// It goes on in upper case or beyond ASCII.
			buf = append(buf, text[start:i]...)
		}
	term:
		for i < n {
			c := text[i]
			switch byteKind[c] {
			case kindSep:
				break term
			case kindLower:
				buf = append(buf, c)
				i++
			case kindUpper:
				buf = append(buf, c+('a'-'A'))
				i++
			default:
				r, size := utf8.DecodeRune(text[i:])
				i += size
				if r == utf8.RuneError || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break term
				}
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			}
		}
		if m := len(buf); m > 0 {
			// Eight bytes of room past the term, so that its words are
			// loads too.
			buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
			s.buf = buf[:m]
			h, head = termWords(buf, 0, m)
			return buf[:m], h, head, i
		}
		// A rune beyond ASCII that is not a letter or a digit: on to the
		// next term.
		s.buf = buf
	}
}

// termHash hashes a term eight bytes at a time (terms are short: one or two
// multiplications, where a general hash function would cost a call).
func termHash(b []byte) uint64 {
	h, _ := termWords(b, 0, len(b))
	return h
}

// termHead packs a term's first eight bytes into a word, zero-padded.
func termHead(term []byte) uint64 {
	_, head := termWords(term, 0, len(term))
	return head
}

// termWords returns termHash and termHead of b[start:end]. Its last word is
// one load, masked, where b holds eight bytes from it (bytes of b past end
// are read, never used): a term's last bytes packed one by one, here and
// again for its head, were some 15% of BenchmarkBuilderCount's instructions.
func termWords(b []byte, start, end int) (h, head uint64) {
	if n := end - start; n < 8 {
		head = lastWord(b, start, end)
		return shortHash(n, head), head
	}
	head = binary.LittleEndian.Uint64(b[start:])
	h = uint64(end-start) * termM1
	i := start
	for ; end-i >= 8; i += 8 {
		h = (h ^ binary.LittleEndian.Uint64(b[i:])) * termM2
		h ^= h >> 29
	}
	if i < end {
		h = (h ^ lastWord(b, i, end)) * termM2
	}
	return mixHash(h), head
}

// lastWord packs b[i:end] (less than eight bytes) into a word, zero-padded:
// one load, masked, where b holds eight bytes from i.
func lastWord(b []byte, i, end int) uint64 {
	if len(b)-i >= 8 {
		return binary.LittleEndian.Uint64(b[i:]) & (1<<(8*uint(end-i)) - 1)
	}
	var v uint64
	for k, c := range b[i:end] {
		v |= uint64(c) << (8 * k)
	}
	return v
}

// Constants and last steps of termWords.
const termM1, termM2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9

func mixHash(h uint64) uint64 {
	h ^= h >> 32
	h *= termM1
	return h ^ h>>29
}

// shortHash is the hash of a term of l < 8 bytes whose word (head) is v.
func shortHash(l int, v uint64) uint64 {
	return mixHash((uint64(l)*termM1 ^ v) * termM2)
}

// Terms returns the distinct terms of a query, in first-seen order.
func Terms(text string) []string {
	var s Scanner
	seen := map[string]bool{}
	var out []string
	s.Each([]byte(text), func(term []byte, _, _ uint64) {
		if !seen[string(term)] {
			seen[string(term)] = true
			out = append(out, string(term))
		}
	})
	return out
}

// TermTable interns terms to dense local ids. A slot holds the id and the
// high bits of the term's hash, so a probe reads the term's bytes only when
// the hashes agree. The dictionary keeps its terms in the same table, whose
// columns a decoded dictionary points into a mapping (dict.go).
//
// A table built on the heap (NewTermTable: a builder's, the terms a
// dictionary gains after its decode) probes heapSlots instead, which hold
// each term's length and first eight bytes beside its id: most terms are
// that short, and their probe reads nothing but the slot, where the arena's
// bytes and their offsets are two more cache misses a token. A decoded
// table keeps the encoded slots, which it reads in place.
type TermTable struct {
	slots  []uint64   // a decoded table's: hash>>32<<32 | id+1; 0 when empty
	heap   []heapSlot // a heap table's (nil in a decoded one)
	hashes []uint64   // by id, to grow the table (none in a decoded table, which never grows)
	starts []uint64   // offsets of each term in arena, by id; one more at the end
	arena  []byte
}

// heapSlot is a slot of a heap table: tag is the high 24 bits of the
// term's hash, its length (at most 255: longer terms are compared in the
// arena) and its id+1 (0: the slot is empty); head is its first eight bytes
// (termHead). Two terms of at most eight bytes are equal when their tags
// and heads are: the length tells "ab" from "ab\x00".
type heapSlot struct {
	tag, head uint64
}

// heapTag is the tag of a heap slot for a term of length n, hash h and id.
func heapTag(h uint64, n int, id int32) uint64 {
	return h>>40<<40 | uint64(min(n, 0xff))<<32 | uint64(id+1)
}

// NewTermTable returns an empty table.
func NewTermTable() *TermTable {
	return &TermTable{heap: make([]heapSlot, 1<<12), starts: []uint64{0}}
}

// reset empties a heap table, keeping its room (Builder.Next).
func (t *TermTable) reset() {
	clear(t.heap)
	t.hashes, t.starts, t.arena = t.hashes[:0], t.starts[:1], t.arena[:0]
}

// Len is the number of terms interned.
func (t *TermTable) Len() int { return len(t.starts) - 1 }

// Term returns the bytes of the term with local id id (none when a decoded
// table's offsets are wrong: the bytes are trusted as far as a checksum
// made them, but never read out of bounds).
func (t *TermTable) Term(id int32) []byte {
	lo, hi := t.starts[id], t.starts[id+1]
	if lo > hi || hi > uint64(len(t.arena)) {
		return nil
	}
	return t.arena[lo:hi]
}

// ID returns the local id of term (whose termHash is h), adding it when new.
// The table must be a heap one (NewTermTable).
func (t *TermTable) ID(term []byte, h uint64) int32 { return t.id(term, h, termHead(term)) }

// id is ID with the term's head (termHead) known.
func (t *TermTable) id(term []byte, h, head uint64) int32 {
	id, slot := t.findHeap(term, h, head)
	if id >= 0 {
		return id
	}
	id = int32(t.Len())
	t.heap[slot] = heapSlot{tag: heapTag(h, len(term), id), head: head}
	t.hashes = append(t.hashes, h)
	t.arena = append(t.arena, term...)
	t.starts = append(t.starts, uint64(len(t.arena)))
	if t.Len()*2 > len(t.heap) {
		t.grow()
	}
	return id
}

// find returns term's local id, or -1 and the empty slot where it would go
// (-1 too in a decoded table with no empty slot, which only a corrupt
// file that passed its checksum could make).
func (t *TermTable) find(term []byte, h uint64) (id int32, slot int) {
	if t.heap != nil {
		return t.findHeap(term, h, termHead(term))
	}
	mask := len(t.slots) - 1
	tag := h &^ 0xffffffff
	for i, n := int(h&uint64(mask)), 0; n < len(t.slots); i, n = (i+1)&mask, n+1 {
		s := t.slots[i]
		if s == 0 {
			return -1, i
		}
		if s&^0xffffffff == tag {
			if id := int64(s&0xffffffff) - 1; id >= 0 && id < int64(t.Len()) && string(t.Term(int32(id))) == string(term) {
				return int32(id), i
			}
		}
	}
	return -1, -1
}

// findHeap is find in a heap table; head is termHead(term).
func (t *TermTable) findHeap(term []byte, h uint64, head uint64) (id int32, slot int) {
	mask := len(t.heap) - 1
	want := heapTag(h, len(term), -1) // id+1 = 0: the tag's other bits
	short := len(term) <= 8
	for i := int(h & uint64(mask)); ; i = (i + 1) & mask {
		s := &t.heap[i]
		if s.tag == 0 {
			return -1, i
		}
		if s.tag&^0xffffffff != want || s.head != head {
			continue
		}
		id := int32(s.tag&0xffffffff) - 1
		if short || string(t.Term(id)) == string(term) {
			return id, i
		}
	}
}

func (t *TermTable) grow() {
	heap := make([]heapSlot, len(t.heap)*2)
	mask := uint64(len(heap) - 1)
	for id, h := range t.hashes {
		term := t.Term(int32(id))
		i := h & mask
		for heap[i].tag != 0 {
			i = (i + 1) & mask
		}
		heap[i] = heapSlot{tag: heapTag(h, len(term), int32(id)), head: termHead(term)}
	}
	t.heap = heap
}

// slotsFor lays out a decoded table's slots, size of them (a power of two,
// more than len(hashes)), for the terms of these hashes, by id.
func slotsFor(hashes []uint64, size int) []uint64 {
	slots := make([]uint64, size)
	mask := uint64(len(slots) - 1)
	for id, h := range hashes {
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h&^0xffffffff | uint64(id+1)
	}
	return slots
}
