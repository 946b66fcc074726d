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
	e := newEncoder(dst, segmentMagic, segmentVersion)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(s.refAvgdl))
	putSection(&e, s.key)
	putSection(&e, s.dl)
	putSection(&e, s.dead)
	putSection(&e, s.groups)
	putSparse(&e, &s.longDL)
	putSection(&e, s.terms)
	putSection(&e, s.termSample)
	putSection(&e, s.meta)
	putSection(&e, s.post)
	putSection(&e, s.skips)
	putSection(&e, s.dense.docs)
	for i := range s.dense.vals {
		d := &s.dense.vals[i]
		putSection(&e, d.bits)
		putSection(&e, d.tfAt)
		putSection(&e, d.tfLow)
		putSection(&e, d.tfs)
		putSparse(&e, &d.bigTF)
		putSection(&e, d.winMax)
	}
	putSection(&e, s.layers.docs)
	for i := range s.layers.vals {
		l := &s.layers.vals[i]
		head := []layersHead{{split: l.split, skipSplit: l.skipSplit, maxTF: l.maxTF, maxImpact: l.maxImpact}}
		putSection(&e, head)
		putSection(&e, l.dl)
	}
	return e.b
}

// DecodeSegment reads a segment AppendEncoded wrote. Its slices point into
// b, which must stay unchanged and mapped while the segment is used.
func DecodeSegment(b []byte) (*Segment, error) {
	d, err := newDecoder(b, segmentMagic, segmentVersion, ErrSegmentFormat)
	if err != nil {
		return nil, err
	}
	if len(d.b) < 16 {
		return nil, fmt.Errorf("%w: cut in its header", ErrSegmentFormat)
	}
	s := &Segment{refAvgdl: math.Float64frombits(binary.LittleEndian.Uint64(d.b[8:]))}
	d.off = 16
	s.key = getSection[uint64](&d)
	s.dl = getSection[uint8](&d)
	s.dead = append([]uint64(nil), getSection[uint64](&d)...) // Kill writes it
	s.groups = getSection[groupRun](&d)
	s.longDL = getSparse[uint16](&d)
	s.terms = getSection[uint32](&d)
	s.termSample = getSection[uint32](&d)
	s.meta = getSection[termMeta](&d)
	s.post = getSection[byte](&d)
	s.skips = getSection[skipEntry](&d)
	s.dense.docs = getSection[uint32](&d)
	if d.err == nil {
		s.dense.vals = make([]denseTerm, len(s.dense.docs))
		for i := range s.dense.vals {
			dt := &s.dense.vals[i]
			dt.bits = getSection[uint64](&d)
			dt.tfAt = getSection[uint32](&d)
			dt.tfLow = getSection[uint16](&d)
			dt.tfs = getSection[uint8](&d)
			dt.bigTF = getSparse[uint16](&d)
			dt.winMax = getSection[uint8](&d)
		}
	}
	s.layers.docs = getSection[uint32](&d)
	if d.err == nil {
		s.layers.vals = make([]layers, len(s.layers.docs))
		for i := range s.layers.vals {
			head := getSection[layersHead](&d)
			if len(head) != 1 {
				d.fail("layers of term %d", i)
				break
			}
			h := head[0]
			s.layers.vals[i] = layers{split: h.split, skipSplit: h.skipSplit, maxTF: h.maxTF, maxImpact: h.maxImpact, dl: getSection[uint8](&d)}
		}
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d bytes after the segment", len(d.b)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	for _, w := range s.dead {
		s.ndead += bits.OnesCount64(w)
	}
	if err := s.checkShape(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSegmentFormat, err)
	}
	return s, nil
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
	for i := 1; i < len(s.groups); i++ {
		if s.groups[i].lo <= s.groups[i-1].lo || int(s.groups[i].lo) >= docs {
			return fmt.Errorf("group run %d out of order", i)
		}
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
			if dt == nil || len(dt.bits) != (docs+63)/64 || len(dt.tfAt) != len(dt.winMax)+1 || len(dt.tfLow) != len(dt.tfs) {
				return fmt.Errorf("term %d's dense column", i)
			}
			for w := 1; w < len(dt.tfAt); w++ {
				if dt.tfAt[w] < dt.tfAt[w-1] || int(dt.tfAt[w]) > len(dt.tfLow) {
					return fmt.Errorf("term %d's dense windows", i)
				}
			}
		}
	}
	if n := len(s.meta); n > 0 && (int(s.meta[n-1].off) != len(s.post) || int(s.meta[n-1].skipOff) != len(s.skips)) {
		return errors.New("the last term's end")
	}
	for _, sk := range s.skips {
		if int(sk.end) > len(s.post) || int(sk.lastDoc) >= max(docs, 1) {
			return errors.New("a skip entry past the postings")
		}
	}
	for _, sp := range []interface{ ascending() bool }{&s.longDL, &s.dense, &s.layers} {
		if !sp.ascending() {
			return errors.New("a sparse column out of order")
		}
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

type segmentEncoder struct {
	b    []byte
	base int
}

// putSection writes a section: its length in values, then its values'
// bytes, padded to sectionAlign. Several parts make one section, their
// values one after the other.
func putSection[T any](e *segmentEncoder, parts ...[]T) {
	n := 0
	for _, v := range parts {
		n += len(v)
	}
	e.b = binary.LittleEndian.AppendUint64(e.b, uint64(n))
	for _, v := range parts {
		if len(v) > 0 {
			e.b = append(e.b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0])))...)
		}
	}
	for (len(e.b)-e.base)%sectionAlign != 0 {
		e.b = append(e.b, 0)
	}
}

func putSparse[T any](e *segmentEncoder, c *Sparse[T]) {
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
	return segmentDecoder{b: b, off: 8}, nil
}

type segmentDecoder struct {
	b   []byte
	off int
	err error
}

func (d *segmentDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrSegmentFormat, fmt.Sprintf(format, a...))
	}
}

// getSection reads a section as a slice into d's bytes (nil when empty).
func getSection[T any](d *segmentDecoder) []T {
	if d.err != nil {
		return nil
	}
	if len(d.b)-d.off < 8 {
		d.fail("cut at byte %d", d.off)
		return nil
	}
	n := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if n > uint64(len(d.b)-d.off)/size {
		d.fail("a section of %d values past the end", n)
		return nil
	}
	bytes := int(n * size)
	var out []T
	if n > 0 {
		out = unsafe.Slice((*T)(unsafe.Pointer(&d.b[d.off])), int(n))
	}
	d.off += (bytes + sectionAlign - 1) / sectionAlign * sectionAlign
	if d.off > len(d.b) {
		d.fail("padding past the end")
		return nil
	}
	return out
}

func getSparse[T any](d *segmentDecoder) Sparse[T] {
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
