package bm25

// This file holds a segment read back from bytes that are checked as they
// are first used, not all at once (a mapped cache blob whose checksums its
// store checks by range, issue 33): the Backing that checks them, and the
// checks of a term's and a document's values that ReadSegmentLazy leaves
// to their first use. An index of gigabytes so answers its first search
// after reading the few pages that search needs, and never a byte that
// was not checked.
//
// What is checked when: at the decode, every section's header, the dead
// bits (copied), the groups, the long lengths, the sampled terms and the
// dense and split terms' ids and heads (all small, read whole by the
// decode's own checks); at a term's first use (lists), its run of terms,
// its two term entries, its postings, skips, and dense or split columns,
// and its values (offsets and skips within their sections); at the first
// search of the segment, the length column (read for every posting
// scored); at a hit's entry into the top k, its key's range of keys
// (keyRanges). The one read before its check: the heap's guess of the
// documents it will take loads their keys side by side (topK.touchKeys),
// a hint whose value is never used. What reads a segment whole (a merge, the statistics'
// Drop, Encode) checks it whole first.

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Backing checks the bytes a segment was read from before their first
// use. Its methods do not return on bad bytes: they panic with the
// backing's corruption, which the reader's guard (the owner's, the same
// that catches a fault on a mapped page) turns into its error; the segment
// must then not be read again.
type Backing interface {
	// Check returns once p's bytes, a part of those the segment was read
	// from, are found as written.
	Check(p []byte)
	// CheckAll returns once all of them are.
	CheckAll()
	// Corrupt is for a value found wrong in bytes that passed Check (a
	// length or an offset past its section): it never returns.
	Corrupt(err error)
}

// CheckValues checks the bytes of v through b (nil: nothing to check).
func CheckValues[T any](b Backing, v []T) {
	if b == nil || len(v) == 0 {
		return
	}
	b.Check(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0]))))
}

// CheckValue checks the bytes of v[i] through b (nil: nothing to check).
func CheckValue[T any](b Backing, v []T, i int) {
	if b != nil {
		CheckValues(b, v[i:i+1])
	}
}

// CheckSparse checks the bytes of the whole column c through b.
func CheckSparse[T any](b Backing, c *Sparse[T]) {
	CheckValues(b, c.docs)
	CheckValues(b, c.vals)
}

// lazyChecks is what a segment read with ReadSegmentLazy has checked so
// far beyond its decode.
type lazyChecks struct {
	back    Backing
	termsOK []atomic.Uint64 // a bit a term: its values checked
	docs    sync.Once       // the length column checked
	whole   atomic.Bool     // every byte checked (checkWhole)
}

// Backing is the segment's backing (nil: every byte was checked when it
// was read, or the segment was built here).
func (s *Segment) Backing() Backing {
	if s.lazy == nil {
		return nil
	}
	return s.lazy.back
}

// checkWhole checks every byte of a lazily read segment, for a caller
// that reads it whole.
func (s *Segment) checkWhole() {
	if s.lazy == nil || s.lazy.whole.Load() {
		return
	}
	s.lazy.back.CheckAll()
	s.lazy.whole.Store(true)
}

// checkTermRun checks the run of terms termIndex searches, from lo.
func (s *Segment) checkTermRun(lo int) {
	if s.lazy != nil {
		CheckValues(s.lazy.back, s.terms[lo:min(lo+termSampleEvery, len(s.terms))])
	}
}

// keyRanges is how many ranges of its keys a lazily read segment checks
// apart (Segment.keysOK's bits), each of keysPerCheck keys (a page of the
// key column, 4 KiB) or a power of two times: a page up to 128K keys, at
// most 16 pages (64 KiB, a backing's chunk) up to 2M.
const (
	keyRanges    = 256
	keysPerCheck = 512
)

// checkKey checks document d's key. A key is read for every hit a heap
// takes, and most of a cold cheap query's reads were checked already by an
// earlier search: one bit beside the segment's lazy checks (a line its
// search has read already) says so, where the backing's check of a range
// (an interface call, then the blob's fields and chunk bits) was ~4% of a
// cold cheap query's ranking (issue 33). The range is checked whole the
// first time one of its keys is read: what a backing checks of one key is
// its chunk (64 KiB) anyway.
func (s *Segment) checkKey(d uint32) {
	if s.lazy == nil {
		return
	}
	r := d >> s.keyShift
	if s.keysOK[r/64].Load()&(1<<(r%64)) == 0 {
		s.checkKeys(r)
	}
}

// checkKeys checks the r-th range of keys, then says so in keysOK; a bad
// range panics in the backing's Check, its bit never set.
func (s *Segment) checkKeys(r uint32) {
	lo := int(r) << s.keyShift
	CheckValues(s.lazy.back, s.key[lo:min(lo+1<<s.keyShift, len(s.key))])
	s.keysOK[r/64].Or(1 << (r % 64))
}

// keyShiftFor is the shift that takes a document to its range of keys
// (keyRanges at most, each keysPerCheck keys or a power of two times).
func keyShiftFor(docs int) uint8 {
	sh := uint8(bits.TrailingZeros(keysPerCheck))
	for docs > keyRanges<<sh {
		sh++
	}
	return sh
}

// checkDocs checks the length column, before a search scores the
// segment's documents.
func (s *Segment) checkDocs() {
	if s.lazy != nil {
		s.lazy.docs.Do(func() { CheckValues(s.lazy.back, s.dl) })
	}
}

// checkTerm checks the segment's i-th term's values before lists reads
// them: the bytes, and the offsets and lengths a lookup indexes with (what
// checkShape checks of every term of a segment read whole).
func (s *Segment) checkTerm(i int) {
	z := s.lazy
	if z == nil || z.termsOK[i/64].Load()&(1<<(i%64)) != 0 {
		return
	}
	b := z.back
	CheckValues(b, s.meta[i:i+2])
	m, n := s.meta[i], s.meta[i+1]
	if m.off > n.off || int(n.off) > len(s.post) || m.skipOff > n.skipOff || int(n.skipOff) > len(s.skips) || m.flags&^(metaSplit|metaDense) != 0 {
		b.Corrupt(fmt.Errorf("%w: term %d's offsets", ErrSegmentFormat, i))
	}
	p, sk := s.post[m.off:n.off], s.skips[m.skipOff:n.skipOff]
	CheckValues(b, p)
	CheckValues(b, sk)
	for _, e := range sk {
		if int(e.end) > len(p) || int(e.lastDoc) >= max(s.Docs(), 1) {
			b.Corrupt(fmt.Errorf("%w: term %d's skips", ErrSegmentFormat, i))
		}
	}
	if m.flags&metaSplit != 0 {
		l := s.layers.Ptr(uint32(i))
		if l == nil || int(l.split) > len(p) || int(l.skipSplit) > len(sk) {
			b.Corrupt(fmt.Errorf("%w: term %d's split", ErrSegmentFormat, i))
		}
		CheckValues(b, l.dl)
	}
	if m.flags&metaDense != 0 {
		dt := s.dense.Ptr(uint32(i))
		if dt == nil {
			b.Corrupt(fmt.Errorf("%w: term %d's dense column", ErrSegmentFormat, i))
		}
		CheckValues(b, dt.bits)
		CheckValues(b, dt.tfAt)
		CheckValues(b, dt.tfLow)
		CheckValues(b, dt.tfs)
		CheckSparse(b, &dt.bigTF)
		CheckValues(b, dt.winMax)
		if err := dt.checkShape(s.Docs()); err != nil {
			b.Corrupt(fmt.Errorf("%w: term %d's %v", ErrSegmentFormat, i, err))
		}
	}
	z.termsOK[i/64].Or(1 << (i % 64))
}

// checkShape checks a dense term's columns against the segment's docs.
func (dt *denseTerm) checkShape(docs int) error {
	if len(dt.bits) != (docs+63)/64 || len(dt.tfAt) != len(dt.winMax)+1 || len(dt.tfLow) != len(dt.tfs) {
		return fmt.Errorf("dense column")
	}
	for w := 1; w < len(dt.tfAt); w++ {
		if dt.tfAt[w] < dt.tfAt[w-1] || int(dt.tfAt[w]) > len(dt.tfLow) {
			return fmt.Errorf("dense windows")
		}
	}
	return nil
}
