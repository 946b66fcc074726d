package retriever

// This file holds a segment's blob in the persisted index (spec §15, issue
// 18): the engine's encoding (bm25.Segment.Encode) and the pieces' columns
// after it, every column one aligned section, so that a segment read back
// from a mapped blob points its slices into the mapping and builds nothing
// per piece but the few masked texts' headers. The dead bits are not the
// blob's: they change after it is written, and the state blob holds them
// (persist_codec.go).

import (
	"fmt"
	"unsafe"

	"runls/retriever/internal/bm25"
)

// segmentBlobMagic opens the pieces' columns: "RLPIECE1".
const segmentBlobMagic = 0x3145434549504c52

// encodeSegment appends s's blob to dst.
func encodeSegment(dst []byte, s *segment) []byte {
	e := bm25.NewSectionEncoder(dst)
	s.Segment.Encode(e)
	c := &s.pieceColumns
	bm25.PutSection(e, []uint64{segmentBlobMagic})
	bm25.PutSection(e, c.lineBase)
	bm25.PutSection(e, c.lineStep)
	bm25.PutSection(e, c.farLine)
	bm25.PutSection(e, c.flags)
	bm25.PutSection(e, c.start16)
	bm25.PutSection(e, c.blen16)
	bm25.PutSparse(e, &c.wide)
	bm25.PutSection(e, c.conv16)
	bm25.PutSection(e, c.convs)
	bm25.PutSection(e, c.conv32)
	var docs, ends []uint32
	var text []byte
	c.masked.Each(func(d uint32, t string) {
		docs = append(docs, d)
		text = append(text, t...)
		ends = append(ends, uint32(len(text)))
	})
	bm25.PutSection(e, docs)
	bm25.PutSection(e, ends)
	bm25.PutSection(e, text)
	bm25.PutSparse(e, &c.toldHash)
	return e.Bytes()
}

// decodeSegment reads a segment's blob; its slices point into b. convs is
// how many conversation ids the index holds and files how many file ids:
// every value a lookup indexes with is checked, so that bytes that pass the
// blob's checksum but are wrong give an error, never a read out of range.
func decodeSegment(b []byte, convs, files uint32) (*segment, error) {
	d := bm25.NewSectionDecoder(b)
	s := &segment{Segment: bm25.ReadSegment(d)}
	c := &s.pieceColumns
	if magic := bm25.GetSection[uint64](d); d.Err() == nil && (len(magic) != 1 || magic[0] != segmentBlobMagic) {
		d.Fail("no pieces' columns")
	}
	c.lineBase = bm25.GetSection[uint32](d)
	c.lineStep = bm25.GetSection[uint8](d)
	c.farLine = bm25.GetSection[farLine](d)
	c.flags = bm25.GetSection[uint8](d)
	c.start16 = bm25.GetSection[uint16](d)
	c.blen16 = bm25.GetSection[uint16](d)
	c.wide = bm25.GetSparse[[2]uint32](d)
	c.conv16 = bm25.GetSection[uint16](d)
	c.convs = bm25.GetSection[uint32](d)
	c.conv32 = bm25.GetSection[uint32](d)
	mdocs := bm25.GetSection[uint32](d)
	mends := bm25.GetSection[uint32](d)
	mtext := bm25.GetSection[byte](d)
	c.toldHash = bm25.GetSparse[uint64](d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("segment blob: %w", err)
	}
	if err := s.checkColumns(convs, files); err != nil {
		return nil, fmt.Errorf("segment blob: %w", err)
	}
	if len(mends) != len(mdocs) {
		return nil, fmt.Errorf("segment blob: %d masked texts' ends for %d pieces", len(mends), len(mdocs))
	}
	prev := uint32(0)
	for i, doc := range mdocs {
		end := mends[i]
		if end < prev || int(end) > len(mtext) || int(doc) >= s.Docs() || i > 0 && doc <= mdocs[i-1] {
			return nil, fmt.Errorf("segment blob: masked text %d", i)
		}
		// A string into the blob: immutable, as the mapping is.
		if end > prev {
			c.masked.Set(doc, unsafe.String(&mtext[prev], end-prev))
		} else {
			c.masked.Set(doc, "")
		}
		prev = end
	}
	return s, nil
}

// checkColumns checks the pieces' columns against the engine's documents:
// every length, and every value used as an index.
func (s *segment) checkColumns(convs, files uint32) error {
	c := &s.pieceColumns
	n := s.Docs()
	switch {
	case len(c.lineStep) != n || len(c.flags) != n || len(c.start16) != n || len(c.blen16) != n:
		return fmt.Errorf("columns of %d, %d, %d, %d values for %d pieces", len(c.lineStep), len(c.flags), len(c.start16), len(c.blen16), n)
	case len(c.lineBase) != (n+lineGroup-1)/lineGroup:
		return fmt.Errorf("%d base lines for %d pieces", len(c.lineBase), n)
	case c.conv32 != nil && (len(c.conv32) != n || c.conv16 != nil || c.convs != nil):
		return fmt.Errorf("%d wide conversations for %d pieces", len(c.conv32), n)
	case c.conv32 == nil && len(c.conv16) != n:
		return fmt.Errorf("%d conversations for %d pieces", len(c.conv16), n)
	case n > 0 && s.MaxGroup() >= files:
		return fmt.Errorf("a piece of file %d of %d", s.MaxGroup(), files)
	}
	far := 0
	for d, step := range c.lineStep {
		if step != farMark {
			continue
		}
		if far >= len(c.farLine) || c.farLine[far].doc != uint32(d) {
			return fmt.Errorf("no far line for piece %d", d)
		}
		far++
	}
	if far != len(c.farLine) {
		return fmt.Errorf("%d far lines for %d pieces", len(c.farLine), far)
	}
	for _, id := range c.convs {
		if id >= convs {
			return fmt.Errorf("conversation %d of %d", id, convs)
		}
	}
	for _, id := range c.conv32 {
		if id >= convs {
			return fmt.Errorf("conversation %d of %d", id, convs)
		}
	}
	for _, i := range c.conv16 {
		if int(i) >= len(c.convs) {
			return fmt.Errorf("conversation index %d of %d", i, len(c.convs))
		}
	}
	if c.wide.Len() > 0 && c.wide.Last() >= uint32(n) || c.toldHash.Len() > 0 && c.toldHash.Last() >= uint32(n) {
		return fmt.Errorf("a wide value or told hash past the pieces")
	}
	return nil
}
