package bm25

// This file holds a segment's encoding for the persisted index (spec §15,
// issue 18): every column of the flat segment as one section of raw
// little-endian values, each 8-byte aligned, so that a segment read back
// from a mapped file points its slices into the mapping and builds nothing
// per term or per document (zoekt maps its shards the same way). Only the
// dead bits are copied, as Kill writes them.
//
// The bytes are trusted as far as a checksum made them (the store checks
// each blob's CRC-32C): DecodeSegment checks every length and offset a
// lookup indexes with, so that no section can send a read past its end,
// but not the postings' varints, which only a corrupt file that passed its
// checksum could make wrong.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"
)

// ErrSegmentFormat: bytes that are not a segment of this encoding.
var ErrSegmentFormat = errors.New("bm25: not an encoded segment")

const (
	segmentMagic   = "RLSG"
	segmentVersion = 1
	sectionAlign   = 8
)

// AppendEncoded appends the segment's encoding to dst. The encoding starts
// at an 8-byte aligned offset of dst's backing array only if dst's length
// is a multiple of 8; DecodeSegment wants its input so aligned (else it
// copies it).
func (s *Segment) AppendEncoded(dst []byte) []byte {
	e := NewSectionEncoder(dst)
	s.Encode(e)
	return e.Bytes()
}

// Encode writes the segment's encoding as e's next sections, for a caller
// that puts its own sections beside it in one blob (ReadSegment reads it).
func (s *Segment) Encode(e *SectionEncoder) {
	s.checkWhole()
	e.b = append(e.b, segmentMagic...)
	e.b = binary.LittleEndian.AppendUint32(e.b, segmentVersion)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(s.refAvgdl))
	putSection(e, s.key)
	putSection(e, s.dl)
	putSection(e, s.dead)
	putSection(e, s.groups)
	putSparse(e, &s.longDL)
	putSection(e, s.terms)
	putSection(e, s.termSample)
	putSection(e, s.meta)
	putSection(e, s.post)
	putSection(e, s.skips)
	putSection(e, s.dense.docs)
	for i := range s.dense.vals {
		d := &s.dense.vals[i]
		putSection(e, d.bits)
		putSection(e, d.tfAt)
		putSection(e, d.tfLow)
		putSection(e, d.tfs)
		putSparse(e, &d.bigTF)
		putSection(e, d.winMax)
	}
	putSection(e, s.layers.docs)
	for i := range s.layers.vals {
		l := &s.layers.vals[i]
		head := []layersHead{{split: l.split, skipSplit: l.skipSplit, maxTF: l.maxTF, maxImpact: l.maxImpact}}
		putSection(e, head)
		putSection(e, l.dl)
	}
}

// DecodeSegment reads a segment AppendEncoded wrote. Its slices point into
// b, which must stay unchanged and mapped while the segment is used.
func DecodeSegment(b []byte) (*Segment, error) {
	d := NewSectionDecoder(b)
	s := ReadSegment(d)
	if err := d.Finish(); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadSegment reads a segment Encode wrote as d's next sections; nil when
// they are not one (d.Err says why).
func ReadSegment(d *SectionDecoder) *Segment {
	s := readSegment(d)
	if s == nil {
		return nil
	}
	if err := s.checkShape(); err != nil {
		d.fail("%v", err)
		return nil
	}
	s.sampleTop()
	return s
}

// ReadSegmentLazy is ReadSegment for bytes checked as they are first used
// (backing.go): d's sections' headers and the few small sections it reads
// whole are checked through back now, with the values it checks; the
// rest, with their values, at their first use. d must read sections from
// the bytes back checks (d.SetBacking(back) before the first section) and
// back must stay usable while the segment is.
func ReadSegmentLazy(d *SectionDecoder, back Backing) *Segment {
	if d.err == nil && d.back != back {
		d.fail("a lazy read without its backing")
	}
	if d.err == nil {
		back.Check(d.b[d.off:min(d.off+16, d.end)])
	}
	s := readSegment(d)
	if s == nil {
		return nil
	}
	s.lazy = &lazyChecks{back: back, termsOK: make([]atomic.Uint64, (len(s.terms)+63)/64)}
	s.keyShift = keyShiftFor(len(s.key))
	if err := s.checkSmall(); err != nil {
		d.fail("%v", err)
		return nil
	}
	s.sampleTop()
	return s
}

// readSegment reads a segment's sections, without checking their values.
func readSegment(d *SectionDecoder) *Segment {
	if d.err != nil {
		return nil
	}
	b := d.b
	if d.end-d.off < 16 || string(b[d.off:d.off+4]) != segmentMagic || binary.LittleEndian.Uint32(b[d.off+4:]) != segmentVersion {
		d.fail("magic or version")
		return nil
	}
	s := &Segment{refAvgdl: math.Float64frombits(binary.LittleEndian.Uint64(b[d.off+8:]))}
	d.off += 16
	s.key = getSection[uint64](d)
	s.dl = getSection[uint8](d)
	dead := getSection[uint64](d)
	CheckValues(d.back, dead)
	s.dead = append([]uint64(nil), dead...) // Kill writes it
	s.groups = getSection[groupRun](d)
	s.longDL = getSparse[uint16](d)
	s.terms = getSection[uint32](d)
	s.termSample = getSection[uint32](d)
	s.meta = getSection[termMeta](d)
	s.post = getSection[byte](d)
	s.skips = getSection[skipEntry](d)
	s.dense.docs = getSection[uint32](d)
	if d.err == nil {
		s.dense.vals = make([]denseTerm, len(s.dense.docs))
		for i := range s.dense.vals {
			dt := &s.dense.vals[i]
			dt.bits = getSection[uint64](d)
			dt.tfAt = getSection[uint32](d)
			dt.tfLow = getSection[uint16](d)
			dt.tfs = getSection[uint8](d)
			dt.bigTF = getSparse[uint16](d)
			dt.winMax = getSection[uint8](d)
		}
	}
	s.layers.docs = getSection[uint32](d)
	if d.err == nil {
		s.layers.vals = make([]layers, len(s.layers.docs))
		for i := range s.layers.vals {
			head := getSection[layersHead](d)
			if len(head) != 1 {
				d.fail("layers of term %d", i)
				break
			}
			CheckValues(d.back, head)
			h := head[0]
			s.layers.vals[i] = layers{split: h.split, skipSplit: h.skipSplit, maxTF: h.maxTF, maxImpact: h.maxImpact, dl: getSection[uint8](d)}
		}
	}
	if d.err != nil {
		return nil
	}
	for _, w := range s.dead {
		s.ndead += bits.OnesCount64(w)
	}
	return s
}

// DeadBits returns the segment's dead bits, one a document, as Kill
// writes them (the caller holds the lock Kill is called under, and copies
// them before it lets go): a persisted index stores them beside the
// segment, whose blob is written once.
func (s *Segment) DeadBits() []uint64 { return s.dead }

// SetDeadBits gives a segment read back the dead bits stored for it: at
// least its own (a document dead when encoded stays dead) and one word
// each 64 documents.
func (s *Segment) SetDeadBits(words []uint64) error {
	if len(words) != len(s.dead) {
		return fmt.Errorf("%w: %d dead words for %d documents", ErrSegmentFormat, len(words), s.Docs())
	}
	n := 0
	for i, w := range words {
		if s.dead[i]&^w != 0 {
			return fmt.Errorf("%w: a dead document alive again", ErrSegmentFormat)
		}
		n += bits.OnesCount64(w)
	}
	if r := s.Docs() % 64; r != 0 && len(words) > 0 && words[len(words)-1]>>r != 0 {
		return fmt.Errorf("%w: dead bits past the last document", ErrSegmentFormat)
	}
	copy(s.dead, words)
	s.ndead = n
	return nil
}

// layersHead is a split term's fixed fields, as one section.
type layersHead struct {
	split     uint32
	skipSplit uint32
	maxTF     [2]uint16
	maxImpact [2]float32
}

// checkShape checks every length and offset a lookup indexes with.
func (s *Segment) checkShape() error {
	if err := s.checkSmall(); err != nil {
		return err
	}
	for i := range s.terms {
		if i > 0 && s.terms[i] <= s.terms[i-1] {
			return fmt.Errorf("term %d out of order", i)
		}
		if i%termSampleEvery == 0 && s.termSample[i/termSampleEvery] != s.terms[i] {
			return fmt.Errorf("sampled term %d", i)
		}
	}
	for i := 0; i+1 < len(s.meta); i++ {
		m, n := s.meta[i], s.meta[i+1]
		if m.off > n.off || m.skipOff > n.skipOff || m.flags&^(metaSplit|metaDense) != 0 {
			return fmt.Errorf("term %d's offsets", i)
		}
		if m.flags&metaSplit != 0 {
			l := s.layers.Ptr(uint32(i))
			if l == nil || l.split > n.off-m.off || l.skipSplit > n.skipOff-m.skipOff {
				return fmt.Errorf("term %d's split", i)
			}
		}
		if m.flags&metaDense != 0 {
			dt := s.dense.Ptr(uint32(i))
			if dt == nil {
				return fmt.Errorf("term %d's dense column", i)
			}
			if err := dt.checkShape(len(s.key)); err != nil {
				return fmt.Errorf("term %d's %v", i, err)
			}
		}
	}
	for _, sk := range s.skips {
		if int(sk.end) > len(s.post) || int(sk.lastDoc) >= max(len(s.key), 1) {
			return errors.New("a skip entry past the postings")
		}
	}
	return nil
}

// checkSmall is checkShape's checks that read no more than the segment's
// small sections (its lengths, groups, sampled terms, sparse columns' ids):
// those of a segment read lazily at its decode (backing.go), which checks
// those sections' bytes first. A term's own values are checked at its
// first use (checkTerm).
func (s *Segment) checkSmall() error {
	docs := len(s.key)
	switch {
	case len(s.dl) != docs:
		return fmt.Errorf("%d lengths for %d documents", len(s.dl), docs)
	case len(s.dead) != (docs+63)/64:
		return fmt.Errorf("%d dead words for %d documents", len(s.dead), docs)
	case docs > 0 && (len(s.groups) == 0 || s.groups[0].lo != 0):
		return errors.New("no group for the first document")
	case len(s.meta) != len(s.terms)+1:
		return fmt.Errorf("%d term entries for %d terms", len(s.meta), len(s.terms))
	case len(s.termSample) != (len(s.terms)+termSampleEvery-1)/termSampleEvery:
		return fmt.Errorf("%d sampled terms of %d", len(s.termSample), len(s.terms))
	}
	if b := s.Backing(); b != nil {
		CheckValues(b, s.groups)
		CheckSparse(b, &s.longDL)
		CheckValues(b, s.termSample)
		CheckValues(b, s.dense.docs)
		CheckValues(b, s.layers.docs)
		if n := len(s.meta); n > 0 {
			CheckValues(b, s.meta[n-1:])
		}
	}
	for i := 1; i < len(s.groups); i++ {
		if s.groups[i].lo <= s.groups[i-1].lo || int(s.groups[i].lo) >= docs {
			return fmt.Errorf("group run %d out of order", i)
		}
	}
	for i := 1; i < len(s.termSample); i++ {
		if s.termSample[i] <= s.termSample[i-1] {
			return fmt.Errorf("sampled term %d out of order", i)
		}
	}
	if n := len(s.meta); n > 0 && (int(s.meta[n-1].off) != len(s.post) || int(s.meta[n-1].skipOff) != len(s.skips)) {
		return errors.New("the last term's end")
	}
	for _, sp := range []interface{ ascending() bool }{&s.longDL, &s.dense, &s.layers} {
		if !sp.ascending() {
			return errors.New("a sparse column out of order")
		}
	}
	// A term column's ids are terms': a rank of them (termrank.go) is as
	// large as its last id, which an id past the terms would make of any
	// size (an id of 1<<31: a 300 MB rank, the review of 6c7d6d1).
	if s.dense.Len() > 0 && int(s.dense.Last()) >= len(s.terms) || s.layers.Len() > 0 && int(s.layers.Last()) >= len(s.terms) {
		return errors.New("a term column's id past the terms")
	}
	if s.longDL.Len() > 0 && int(s.longDL.Last()) >= docs {
		return errors.New("a long length's document past the documents")
	}
	return nil
}

// ascending reports whether the column's ids are strictly increasing and
// it has one value each.
func (c *Sparse[T]) ascending() bool {
	if len(c.docs) != len(c.vals) {
		return false
	}
	for i := 1; i < len(c.docs); i++ {
		if c.docs[i] <= c.docs[i-1] {
			return false
		}
	}
	return true
}

// SectionEncoder appends sections: each a length in values, then the
// values' raw little-endian bytes, padded to 8 bytes from where it
// started, so that a SectionDecoder over the same bytes (8-byte aligned)
// gives slices pointing into them. The values' type must hold no pointer
// and have no padding whose bytes matter.
type SectionEncoder struct {
	b    []byte
	base int
	lens []uint64 // every section's length so far, for PutIndex
}

// PutIndex ends e's sections with their index: every section's length in
// values again, in order, then how many there are (8 bytes each). A
// decoder that reads it first (SectionDecoder.UseIndex) lays the sections
// out from it without reading their headers, which lie one a section
// throughout the bytes: a reader that checks what it reads (a mapped blob
// checked by range, backing.go) then checks the index's few bytes, not a
// chunk around every header.
func (e *SectionEncoder) PutIndex() {
	for _, n := range e.lens {
		e.b = binary.LittleEndian.AppendUint64(e.b, n)
	}
	e.b = binary.LittleEndian.AppendUint64(e.b, uint64(len(e.lens)))
}

// NewSectionEncoder starts sections at the end of dst.
func NewSectionEncoder(dst []byte) *SectionEncoder { return &SectionEncoder{b: dst, base: len(dst)} }

// Bytes returns dst with the sections appended.
func (e *SectionEncoder) Bytes() []byte { return e.b }

// Grow makes room for n more bytes of sections, made once where sections
// appended one by one grow the encoding by a quarter at a time (each
// growth a copy: some five times its size allocated in all, and one and a
// quarter times more held at the last, for the cache entry's 52 MB state
// blob of 100,000 files: issue 33).
func (e *SectionEncoder) Grow(n int) { e.b = slices.Grow(e.b, n) }

// SectionSize is the bytes PutSection writes for v.
func SectionSize[T any](v []T) int { return sectionBytes(len(v), int(unsafe.Sizeof(*new(T)))) }

// sectionBytes is what a section of n values of size bytes each takes: its
// length, the values, padded to sectionAlign.
func sectionBytes(n, size int) int {
	b := 8 + n*size
	return b + (sectionAlign-b%sectionAlign)%sectionAlign
}

// PutSection writes v as e's next section.
func PutSection[T any](e *SectionEncoder, v []T) { putSection(e, v) }

// PutSparse writes a sparse column as two sections.
func PutSparse[T any](e *SectionEncoder, c *Sparse[T]) { putSparse(e, c) }

// putSection writes a section: its length in values, then its values'
// bytes, padded to sectionAlign. Several parts make one section, their
// values one after the other.
func putSection[T any](e *SectionEncoder, parts ...[]T) {
	n := 0
	for _, v := range parts {
		n += len(v)
	}
	beginSection(e, n)
	for _, v := range parts {
		appendValues(e, v)
	}
	endSection(e)
}

// beginSection, appendValues and endSection write a section of n values
// given a part at a time (putSection).
func beginSection(e *segmentEncoder, n int) {
	e.b = binary.LittleEndian.AppendUint64(e.b, uint64(n))
	e.lens = append(e.lens, uint64(n))
}

func appendValues[T any](e *segmentEncoder, v []T) {
	if len(v) > 0 {
		e.b = append(e.b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0])))...)
	}
}

func endSection(e *segmentEncoder) {
	for (len(e.b)-e.base)%sectionAlign != 0 {
		e.b = append(e.b, 0)
	}
}

func putSparse[T any](e *SectionEncoder, c *Sparse[T]) {
	putSection(e, c.docs)
	putSection(e, c.vals)
}

// newEncoder starts an encoding at the end of dst with its magic and
// version (8 bytes: the first section is aligned when dst's length is).
func newEncoder(dst []byte, magic string, version uint32) segmentEncoder {
	e := segmentEncoder{b: dst, base: len(dst)}
	e.b = append(e.b, magic...)
	e.b = binary.LittleEndian.AppendUint32(e.b, version)
	return e
}

// newDecoder checks an encoding's magic and version (errFormat when they
// are not these, or the machine is not little-endian) and returns a
// decoder after them over b, or an aligned copy of it.
func newDecoder(b []byte, magic string, version uint32, errFormat error) (segmentDecoder, error) {
	if !littleEndian() {
		return segmentDecoder{}, fmt.Errorf("%w: a big-endian machine", errFormat)
	}
	b = alignedBytes(b)
	if len(b) < 8 || string(b[:4]) != magic || binary.LittleEndian.Uint32(b[4:]) != version {
		return segmentDecoder{}, fmt.Errorf("%w: magic or version", errFormat)
	}
	return segmentDecoder{b: b, off: 8, end: len(b)}, nil
}

// SectionDecoder reads sections a SectionEncoder wrote. Every length is
// checked against the bytes left, so that no section reaches past them;
// the first failure sticks (Err), and every later read gives nothing.
type SectionDecoder struct {
	b    []byte
	off  int
	err  error
	back Backing // checks each section's header before it is read (nil: none)
	// With an index (UseIndex): the sections' lengths, the next one's place
	// in it, and where the sections end (else len(b)).
	lens []uint64
	li   int
	end  int
	// copied: the bytes given were not 8-byte aligned, and b is a copy
	copied bool
}

// SetBacking makes d check each section's header through back before it
// reads it (ReadSegmentLazy); the sections' values are the caller's to
// check. d must not have copied its bytes (NewSectionDecoder copies bytes
// that are not 8-byte aligned): back could not check the copy.
func (d *SectionDecoder) SetBacking(back Backing) {
	if d.copied {
		d.fail("unaligned bytes")
	}
	d.back = back
}

// UseIndex reads the index SectionEncoder.PutIndex ended the bytes with
// (through d's backing, if it has one), and the sections from it, not from
// their headers; call it before the first section.
func (d *SectionDecoder) UseIndex() {
	if d.err != nil {
		return
	}
	if d.off != 0 || d.lens != nil || len(d.b) < 8 || len(d.b)%8 != 0 {
		d.fail("no section index")
		return
	}
	count := d.b[len(d.b)-8:]
	if d.back != nil {
		d.back.Check(count)
	}
	n := binary.LittleEndian.Uint64(count)
	if n > uint64(len(d.b)-8)/8 {
		d.fail("a section index of %d past the start", n)
		return
	}
	d.end = len(d.b) - 8 - 8*int(n)
	index := d.b[d.end : len(d.b)-8]
	if d.back != nil {
		d.back.Check(index)
	}
	d.lens = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(index))), int(n))
	if n == 0 {
		d.lens = []uint64{}
	}
}

// NewSectionDecoder reads sections from b. Slices it gives point into b
// (len == cap: an append copies, never writes b), which must stay
// unchanged while they are used; b not 8-byte aligned is copied first.
func NewSectionDecoder(b []byte) *SectionDecoder {
	d := &SectionDecoder{b: b}
	if !littleEndian() {
		d.fail("a big-endian machine")
		return d
	}
	d.b = alignedBytes(b)
	d.copied = len(b) > 0 && &d.b[0] != &b[0]
	d.end = len(d.b)
	return d
}

// segmentEncoder and segmentDecoder are the names the dictionary's and the
// statistics' encodings use.
type (
	segmentEncoder = SectionEncoder
	segmentDecoder = SectionDecoder
)

// GetSection reads d's next section as values of T.
func GetSection[T any](d *SectionDecoder) []T { return getSection[T](d) }

// GetSparse reads a sparse column PutSparse wrote, checking its order.
func GetSparse[T any](d *SectionDecoder) Sparse[T] {
	c := getSparse[T](d)
	if d.err == nil && !c.ascending() {
		d.fail("a sparse column out of order")
		return Sparse[T]{}
	}
	return c
}

// Fail makes d's error the caller's finding (a value its sections hold
// that the caller checked and refused).
func (d *SectionDecoder) Fail(format string, a ...any) { d.fail(format, a...) }

// Err is d's first failure, or nil.
func (d *SectionDecoder) Err() error { return d.err }

// Finish is d's first failure, or one when bytes are left after the
// sections read.
func (d *SectionDecoder) Finish() error {
	if d.err == nil && d.off != d.end {
		d.fail("%d bytes after the sections", d.end-d.off)
	}
	if d.err == nil && d.lens != nil && d.li != len(d.lens) {
		d.fail("%d sections of an index of %d", d.li, len(d.lens))
	}
	return d.err
}

func (d *SectionDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrSegmentFormat, fmt.Sprintf(format, a...))
	}
}

// getSection reads a section as a slice into d's bytes (nil when empty).
func getSection[T any](d *SectionDecoder) []T {
	if d.err != nil {
		return nil
	}
	if d.end-d.off < 8 {
		d.fail("cut at byte %d", d.off)
		return nil
	}
	var n uint64
	switch {
	case d.lens != nil:
		if d.li == len(d.lens) {
			d.fail("more sections than the index's %d", len(d.lens))
			return nil
		}
		n = d.lens[d.li] // the header, not read, says the same
		d.li++
	case d.back != nil:
		d.back.Check(d.b[d.off : d.off+8])
		fallthrough
	default:
		n = binary.LittleEndian.Uint64(d.b[d.off:])
	}
	d.off += 8
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if n > uint64(d.end-d.off)/size {
		d.fail("a section of %d values past the end", n)
		return nil
	}
	bytes := int(n * size)
	var out []T
	if n > 0 {
		out = unsafe.Slice((*T)(unsafe.Pointer(&d.b[d.off])), int(n))
	}
	d.off += (bytes + sectionAlign - 1) / sectionAlign * sectionAlign
	if d.off > d.end {
		d.fail("padding past the end")
		return nil
	}
	return out
}

func getSparse[T any](d *SectionDecoder) Sparse[T] {
	return Sparse[T]{docs: getSection[uint32](d), vals: getSection[T](d)}
}

// alignedBytes returns b, or a copy of it when it does not start at an
// 8-byte aligned address (sections are read in place as typed slices).
func alignedBytes(b []byte) []byte {
	if len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%sectionAlign == 0 {
		return b
	}
	words := make([]uint64, (len(b)+7)/8)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(b))
	copy(buf, b)
	return buf
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// MaxGroup returns the largest group a document of the segment has (0 for
// none): a segment read back is checked against its owner's groups.
func (s *Segment) MaxGroup() uint32 {
	var m uint32
	for _, r := range s.groups {
		m = max(m, r.group)
	}
	return m
}
