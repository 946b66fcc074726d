package bm25

// This file holds the posting-list codec: the iterator with its skips, the
// encoder, and the tight decoding loops.

import (
	"encoding/binary"
	"math"
	"slices"
)

// postingIter decodes a posting list; with skips it can jump over blocks.
type postingIter struct {
	p     []byte
	pos   int
	last  uint32 // the base of the next delta
	doc   uint32 // the current doc, once next or advance returned true
	tf    uint32
	skips []skipEntry
	si    int
	valid bool
}

// skipEntry marks the end of a block of postings: its last doc and the byte
// offset after it, so that advance can jump over blocks without decoding them,
// and the block's largest tf and largest impact, which bound the score of
// any of its documents (block-max; see ScoreBound).
type skipEntry struct {
	lastDoc   uint32
	end       uint32
	maxTF     uint16
	maxImpact float32
}

// ceil32 rounds an impact up to a float32, so that a bound made from it stays a bound.
func ceil32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// skipEvery is how many postings a block holds.
const skipEvery = 128

func (it *postingIter) next() bool {
	if it.pos >= len(it.p) {
		it.valid = false
		return false
	}
	v, pos := uvarintAt(it.p, it.pos)
	it.pos = pos
	it.doc = it.last + uint32(v>>1)
	it.last = it.doc
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < it.doc {
		it.si++
	}
	if v&1 == 1 {
		it.tf = 1
	} else {
		t, pos := uvarintAt(it.p, it.pos)
		it.pos = pos
		it.tf = uint32(t)
	}
	it.valid = true
	return true
}

// seek jumps over the blocks that end before target without decoding, so
// that blockBound reads the block target would be in.
func (it *postingIter) seek(target uint32) {
	if it.valid && it.doc >= target {
		return
	}
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < target {
		if e := int(it.skips[it.si].end); e > it.pos {
			it.pos, it.last = e, it.skips[it.si].lastDoc
			it.valid = false
		}
		it.si++
	}
}

// rewind moves the iterator back before its list's first posting, as
// newPostingIter leaves it, keeping its list and skips.
func (it *postingIter) rewind() {
	it.valid, it.pos, it.last, it.si = false, 0, ^uint32(0), 0
}

// advance moves to the first doc at or after target, if not there already.
// It jumps over whole blocks, then decodes the rest in a tight loop that
// reads a tf only where it stops.
func (it *postingIter) advance(target uint32) bool {
	if it.valid && it.doc >= target {
		return true
	}
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < target {
		if e := int(it.skips[it.si].end); e > it.pos {
			it.pos, it.last = e, it.skips[it.si].lastDoc
		}
		it.si++
	}
	p, pos, last := it.p, it.pos, it.last
	for pos < len(p) {
		// Deltas take one byte or, for middling terms, two, nearly always.
		var v uint64
		if b := p[pos]; b < 0x80 {
			v, pos = uint64(b), pos+1
		} else if pos+1 < len(p) && p[pos+1] < 0x80 {
			v, pos = uint64(b&0x7f)|uint64(p[pos+1])<<7, pos+2
		} else {
			v, pos = uvarintAt(p, pos)
		}
		doc := last + uint32(v>>1)
		last = doc
		tf := uint32(1)
		if v&1 == 0 {
			var t uint64
			if b := p[pos]; b < 0x80 {
				t, pos = uint64(b), pos+1
			} else {
				t, pos = uvarintAt(p, pos)
			}
			tf = uint32(t)
		}
		if doc >= target {
			it.pos, it.last, it.doc, it.tf, it.valid = pos, last, doc, tf, true
			for it.si < len(it.skips) && it.skips[it.si].lastDoc < doc {
				it.si++
			}
			return true
		}
	}
	it.pos, it.last, it.valid = pos, last, false
	return false
}

// appendPosting encodes a posting: the delta from the last document, shifted
// left, its low bit set when tf is 1 (nearly always); else the tf follows.
func appendPosting(post []byte, delta uint64, tf uint32) []byte {
	if tf == 1 {
		return binary.AppendUvarint(post, delta<<1|1)
	}
	post = binary.AppendUvarint(post, delta<<1)
	return binary.AppendUvarint(post, uint64(tf))
}

// uvarintAt decodes the uvarint at p[pos:] and returns the position after
// it. Loops test for the one-byte form inline and call this for the rest:
// the two-byte form (most deltas of middling terms) first.
func uvarintAt(p []byte, pos int) (uint64, int) {
	if b := p[pos]; b < 0x80 {
		return uint64(b), pos + 1
	}
	if pos+1 < len(p) && p[pos+1] < 0x80 {
		return uint64(p[pos]&0x7f) | uint64(p[pos+1])<<7, pos + 2
	}
	x, n := binary.Uvarint(p[pos:])
	return x, pos + n
}

func newPostingIter(p []byte) postingIter {
	// The first delta counts from -1, so that doc 0 has a delta of 1.
	return postingIter{p: p, last: ^uint32(0)}
}

// decodeFrom appends the docs and tfs of a list's bytes from a block on,
// last being the doc before the block (^0 from the list's start), in a
// tight loop. Its decoding is advance's, written out again: the compiler
// does not inline a function that decodes a posting, and the call costs a
// quarter more a posting in both loops. Its branches stay: predicted, they
// let the next posting's bytes be read before this one's are decoded,
// where arithmetic in their place makes each posting wait on the last.
func decodeFrom(p []byte, last uint32, docs, tfs []uint32) ([]uint32, []uint32) {
	// Room for the most postings p can hold (a byte each), written by index.
	k := len(docs)
	docs, tfs = slices.Grow(docs, len(p))[:k+len(p)], slices.Grow(tfs, len(p))[:k+len(p)]
	for pos := 0; pos < len(p); {
		// Deltas take one byte or, for middling terms, two, nearly always.
		var v uint64
		if b := p[pos]; b < 0x80 {
			v, pos = uint64(b), pos+1
		} else if pos+1 < len(p) && p[pos+1] < 0x80 {
			v, pos = uint64(b&0x7f)|uint64(p[pos+1])<<7, pos+2
		} else {
			v, pos = uvarintAt(p, pos)
		}
		last += uint32(v >> 1)
		tf := uint32(1)
		if v&1 == 0 {
			var t uint64
			if b := p[pos]; b < 0x80 {
				t, pos = uint64(b), pos+1
			} else {
				t, pos = uvarintAt(p, pos)
			}
			tf = uint32(t)
		}
		docs[k], tfs[k] = last, tf
		k++
	}
	return docs[:k], tfs[:k]
}
