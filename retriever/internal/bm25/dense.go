package bm25

// This file holds the bit sets of the most frequent terms of a segment.

import (
	"math"
	"slices"
)

// A term in at least 1/denseFraction of a segment's documents also gets a bit
// set over the documents, so that looking it up in a document (for a rare term's
// documents) costs a bit test, not the decoding of a block. For such a term
// the set costs at most about twice its postings, and few terms are that
// frequent (some 16 a segment in generated runs).
const denseFraction = 16

// denseTerm is a term's documents as bits, with its tf where it is not 1.
type denseTerm struct {
	bits []uint64
	// The documents with tf > 1, by window of denseWindow documents: window w's
	// are tfLow[tfAt[w]:tfAt[w+1]], each as its place in the window, so that
	// a lookup searches a few dozen bytes, and an entry takes three bytes.
	tfAt  []uint32
	tfLow []uint16
	tfs   []uint8        // the tf, or bigTFMark
	bigTF Sparse[uint16] // tfs of bigTFMark and more, by document
	// winMax is the largest tf of each window (0: none has the term;
	// bigTFMark: that or more), which bounds the term's score in its documents
	// far tighter than its largest tf over the segment.
	winMax []uint8
}

const (
	denseWindow = 1 << 10
	bigTFMark   = 0xff
)

// newDenseTerm sets the bits of a term's entries (packed log words, in
// document order).
func newDenseTerm(entries []uint64, docs int) denseTerm {
	windows := (docs + denseWindow - 1) / denseWindow
	t := denseTerm{bits: make([]uint64, (docs+63)/64), tfAt: make([]uint32, windows+1), winMax: make([]uint8, windows)}
	for _, e := range entries {
		doc := uint32(e>>logTFBits) & maxBuilderDocs
		tf := uint32(e & (1<<logTFBits - 1))
		t.bits[doc>>6] |= 1 << (doc & 63)
		w := &t.winMax[doc/denseWindow]
		*w = max(*w, uint8(min(tf, bigTFMark)))
		if tf != 1 {
			t.tfAt[doc/denseWindow+1]++
			t.tfLow = append(t.tfLow, uint16(doc%denseWindow))
			if tf >= bigTFMark {
				t.bigTF.Set(doc, uint16(tf))
				tf = bigTFMark
			}
			t.tfs = append(t.tfs, uint8(tf))
		}
	}
	for w := range windows {
		t.tfAt[w+1] += t.tfAt[w]
	}
	return t
}

// has reports whether document d has the term.
func (t *denseTerm) has(d uint32) bool { return t.bits[d>>6]&(1<<(d&63)) != 0 }

// windowMaxTF bounds the term's tf in document d: the largest of its window.
func (t *denseTerm) windowMaxTF(d uint32) uint16 {
	if m := t.winMax[d/denseWindow]; m != bigTFMark {
		return uint16(m)
	}
	return math.MaxUint16
}

// tf returns the term's tf in document d, 0 when the document lacks it.
func (t *denseTerm) tf(d uint32) uint32 {
	if t.bits[d>>6]&(1<<(d&63)) == 0 {
		return 0
	}
	w := d / denseWindow
	lo, hi := t.tfAt[w], t.tfAt[w+1]
	i, ok := slices.BinarySearch(t.tfLow[lo:hi], uint16(d%denseWindow))
	if !ok {
		return 1
	}
	if tf := t.tfs[int(lo)+i]; tf != bigTFMark {
		return uint32(tf)
	}
	tf, _ := t.bigTF.Get(d)
	return uint32(tf)
}
