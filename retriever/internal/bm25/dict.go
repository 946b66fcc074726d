package bm25

// This file holds the term dictionary: global term ids, shared by every
// segment of an index, and its encoding for the persisted index (spec §15,
// issue 18).

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// A Dict gives each distinct term of an index its global id, in the order
// terms were first seen. It is safe for concurrent use: workers assign the
// ids of their batches while searches look terms up.
//
// Its terms are two term tables (the builder's open-addressing layout):
// base, the terms a decoded dictionary holds, whose columns point into the
// encoded bytes (a read-only mapping: nothing is built per term at open),
// and more, the terms assigned since, with the ids after base's. A new
// dictionary's base is empty. Neither holds a Go string per term, so the
// collector has nothing to scan in them.
type Dict struct {
	mu   sync.RWMutex
	base TermTable // read only; no hashes
	more *TermTable
}

// NewDict returns an empty dictionary.
func NewDict() *Dict {
	return &Dict{base: TermTable{starts: []uint64{0}}, more: NewTermTable()}
}

// Lookup returns the ids of the terms the dictionary holds, in the order of
// terms; the others are left out.
func (dc *Dict) Lookup(terms []string) []uint32 {
	ids := make([]uint32, 0, len(terms))
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	for _, n := range terms {
		term := unsafe.Slice(unsafe.StringData(n), len(n)) // read only: no copy
		if id, ok := dc.find(term, termHash(term)); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// Assign maps a builder's local term ids to global ones, giving new terms
// new ids.
func (dc *Dict) Assign(t *TermTable) []uint32 {
	ids := make([]uint32, t.Len())
	dc.mu.Lock()
	defer dc.mu.Unlock()
	n := uint32(dc.base.Len())
	for i := range ids {
		term, h := t.Term(int32(i)), t.hashes[i]
		if id, _ := dc.base.find(term, h); id >= 0 {
			ids[i] = uint32(id)
		} else {
			ids[i] = n + uint32(dc.more.ID(term, h))
		}
	}
	return ids
}

// Len returns how many terms the dictionary holds.
func (dc *Dict) Len() int {
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	return dc.base.Len() + dc.more.Len()
}

// Terms returns every term by its id.
func (dc *Dict) Terms() []string {
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	names := make([]string, 0, dc.base.Len()+dc.more.Len())
	for _, t := range []*TermTable{&dc.base, dc.more} {
		for id := range t.Len() {
			names = append(names, string(t.Term(int32(id))))
		}
	}
	return names
}

// Footprint returns the bytes the dictionary holds on the heap (the terms
// assigned since it was decoded) and in the encoded bytes it reads.
func (dc *Dict) Footprint() (heap, mapped int64) {
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	return tableBytes(dc.more), tableBytes(&dc.base)
}

func tableBytes(t *TermTable) int64 {
	return int64(cap(t.slots)+2*cap(t.heap)+cap(t.hashes)+cap(t.starts))*8 + int64(cap(t.arena))
}

// find returns term's global id.
func (dc *Dict) find(term []byte, h uint64) (uint32, bool) {
	if id, _ := dc.base.find(term, h); id >= 0 {
		return uint32(id), true
	}
	if id, _ := dc.more.find(term, h); id >= 0 {
		return uint32(dc.base.Len() + int(id)), true
	}
	return 0, false
}

// ErrDictFormat: bytes that are not a dictionary of this encoding.
var ErrDictFormat = errors.New("bm25: not an encoded dictionary")

const (
	dictMagic   = "RLDC"
	dictVersion = 1
)

// AppendEncoded appends the dictionary's encoding to dst: its term table
// (slots at most 3/4 full, the terms' offsets, their bytes) as sections of
// raw little-endian values, each 8-byte aligned from dst's length, as a
// segment's (segment_codec.go).
func (dc *Dict) AppendEncoded(dst []byte) []byte {
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	e := newEncoder(dst, dictMagic, dictVersion)
	if dc.more.Len() == 0 {
		putSection(&e, dc.base.slots)
		putSection(&e, dc.base.starts)
		putSection(&e, dc.base.arena)
		return e.b
	}
	n := dc.base.Len() + dc.more.Len()
	hashes := make([]uint64, 0, n)
	for id := range dc.base.Len() {
		hashes = append(hashes, termHash(dc.base.Term(int32(id))))
	}
	hashes = append(hashes, dc.more.hashes...)
	size := 1
	for size*3 < n*4 {
		size *= 2
	}
	putSection(&e, slotsFor(hashes, size))
	starts := append(make([]uint64, 0, n+1), dc.base.starts...)
	last := starts[len(starts)-1]
	for _, s := range dc.more.starts[1:] {
		starts = append(starts, last+s)
	}
	putSection(&e, starts)
	putSection(&e, dc.base.arena, dc.more.arena)
	return e.b
}

// DecodeDict reads a dictionary AppendEncoded wrote. Its terms point into
// b, which must stay unchanged and mapped while the dictionary is used;
// terms assigned later go to the heap. It checks the sections' lengths, not
// each term's offsets, which a lookup checks (the bytes are trusted as far
// as the store's checksum made them): a decode reads no more of b than the
// sections' headers.
func DecodeDict(b []byte) (*Dict, error) {
	d, err := newDecoder(b, dictMagic, dictVersion, ErrDictFormat)
	if err != nil {
		return nil, err
	}
	t := TermTable{slots: getSection[uint64](&d), starts: getSection[uint64](&d), arena: getSection[byte](&d)}
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d bytes after the dictionary", len(d.b)-d.off)
	}
	n, terms := len(t.slots), len(t.starts)-1
	switch {
	case d.err != nil:
		return nil, fmt.Errorf("%w: %v", ErrDictFormat, d.err)
	case len(t.starts) == 0 || t.starts[0] != 0 || t.starts[len(t.starts)-1] != uint64(len(t.arena)):
		return nil, fmt.Errorf("%w: the terms' offsets", ErrDictFormat)
	case n&(n-1) != 0 || (terms > 0 && n <= terms) || uint64(terms) >= 1<<32-1:
		return nil, fmt.Errorf("%w: a table of %d slots for %d terms", ErrDictFormat, n, terms)
	}
	return &Dict{base: t, more: NewTermTable()}, nil
}
