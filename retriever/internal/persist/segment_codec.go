package persist

// This file holds a segment's blob in the persisted index (spec §15, issue
// 18): the engine's encoding (bm25.Segment.Encode) and the pieces' columns
// after it, every column one aligned section, then the sections' index
// (bm25.SectionEncoder.PutIndex, issue 33), so that a segment read back
// from a mapped blob points its slices into the mapping and builds nothing
// per piece but the few masked texts' headers. The dead bits are not the
// blob's: they change after it is written, and the state blob holds them
// (persist_codec.go).

import (
	"fmt"
	"unsafe"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// segmentBlobMagic opens the pieces' columns: "RLPIECE1".
const segmentBlobMagic = 0x3145434549504c52

// EncodeSegment appends s's blob to dst.
func EncodeSegment(dst []byte, s *corpus.Segment) []byte {
	e := bm25.NewSectionEncoder(dst)
	s.Segment.Encode(e)
	c := &s.Columns
	bm25.PutSection(e, []uint64{segmentBlobMagic})
	bm25.PutSection(e, c.LineBase)
	bm25.PutSection(e, c.LineStep)
	bm25.PutSection(e, c.FarLines)
	bm25.PutSection(e, c.Flags)
	bm25.PutSection(e, c.Start16)
	bm25.PutSection(e, c.Blen16)
	bm25.PutSparse(e, &c.Wide)
	bm25.PutSection(e, c.Conv16)
	bm25.PutSection(e, c.ConvIDs)
	bm25.PutSection(e, c.Conv32)
	var docs, ends []uint32
	var text []byte
	c.Masked.Each(func(d uint32, t string) {
		docs = append(docs, d)
		text = append(text, t...)
		ends = append(ends, uint32(len(text)))
	})
	bm25.PutSection(e, docs)
	bm25.PutSection(e, ends)
	bm25.PutSection(e, text)
	bm25.PutSparse(e, &c.ToldHash)
	// Read first by a decode (DecodeSegmentLazy checks it, and none of the
	// headers throughout the blob).
	e.PutIndex()
	return e.Bytes()
}

// DecodeSegment reads a segment's blob; its slices point into b. convs is
// how many conversation ids the index holds and files how many file ids:
// every value a lookup indexes with is checked, so that bytes that pass the
// blob's checksum but are wrong give an error, never a read out of range.
func DecodeSegment(b []byte, convs, files uint32) (*corpus.Segment, error) {
	return decodeSegment(b, convs, files, nil)
}

// DecodeSegmentLazy is DecodeSegment for bytes checked as they are first
// used (bm25.Backing, issue 33): it checks through back the sections'
// headers and the small columns it reads whole, with their values, and
// leaves the rest to their first use, which checks them through back too
// (bm25's and corpus.Columns' lazy checks). back panics on bad bytes: the
// caller runs it under a guard that catches its panic.
func DecodeSegmentLazy(b []byte, convs, files uint32, back bm25.Backing) (*corpus.Segment, error) {
	return decodeSegment(b, convs, files, back)
}

func decodeSegment(b []byte, convs, files uint32, back bm25.Backing) (*corpus.Segment, error) {
	d := bm25.NewSectionDecoder(b)
	var s *corpus.Segment
	if back != nil {
		d.SetBacking(back)
	}
	d.UseIndex()
	if back != nil {
		s = &corpus.Segment{Segment: bm25.ReadSegmentLazy(d, back), Mapped: true}
	} else {
		s = &corpus.Segment{Segment: bm25.ReadSegment(d), Mapped: true}
	}
	c := &s.Columns
	magic := bm25.GetSection[uint64](d)
	bm25.CheckValues(back, magic)
	if d.Err() == nil && (len(magic) != 1 || magic[0] != segmentBlobMagic) {
		d.Fail("no pieces' columns")
	}
	c.LineBase = bm25.GetSection[uint32](d)
	c.LineStep = bm25.GetSection[uint8](d)
	c.FarLines = bm25.GetSection[corpus.FarLine](d)
	c.Flags = bm25.GetSection[uint8](d)
	c.Start16 = bm25.GetSection[uint16](d)
	c.Blen16 = bm25.GetSection[uint16](d)
	c.Wide = bm25.GetSparse[[2]uint32](d)
	c.Conv16 = bm25.GetSection[uint16](d)
	c.ConvIDs = bm25.GetSection[uint32](d)
	c.Conv32 = bm25.GetSection[uint32](d)
	mdocs := bm25.GetSection[uint32](d)
	mends := bm25.GetSection[uint32](d)
	mtext := bm25.GetSection[byte](d)
	c.ToldHash = bm25.GetSparse[uint64](d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("segment blob: %w", err)
	}
	if back != nil {
		// What is read whole here and by checkColumns; the rest at its use.
		bm25.CheckValues(back, c.FarLines)
		bm25.CheckSparse(back, &c.Wide)
		bm25.CheckValues(back, c.ConvIDs)
		bm25.CheckValues(back, mdocs)
		bm25.CheckValues(back, mends)
		bm25.CheckValues(back, mtext)
		bm25.CheckSparse(back, &c.ToldHash)
	}
	if err := checkColumns(s, convs, files, back != nil); err != nil {
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
			c.Masked.Set(doc, unsafe.String(&mtext[prev], end-prev))
		} else {
			c.Masked.Set(doc, "")
		}
		prev = end
	}
	if back != nil {
		c.SetBacking(back, convs)
	}
	return s, nil
}

// checkColumns checks the pieces' columns against the engine's documents:
// every length, and every value used as an index; lazy, the values of the
// columns by piece are left to their first use (corpus.Columns.SetBacking).
func checkColumns(s *corpus.Segment, convs, files uint32, lazy bool) error {
	c := &s.Columns
	n := s.Docs()
	switch {
	case len(c.LineStep) != n || len(c.Flags) != n || len(c.Start16) != n || len(c.Blen16) != n:
		return fmt.Errorf("columns of %d, %d, %d, %d values for %d pieces", len(c.LineStep), len(c.Flags), len(c.Start16), len(c.Blen16), n)
	case len(c.LineBase) != (n+corpus.LineGroup-1)/corpus.LineGroup:
		return fmt.Errorf("%d base lines for %d pieces", len(c.LineBase), n)
	case c.Conv32 != nil && (len(c.Conv32) != n || c.Conv16 != nil || c.ConvIDs != nil):
		return fmt.Errorf("%d wide conversations for %d pieces", len(c.Conv32), n)
	case c.Conv32 == nil && len(c.Conv16) != n:
		return fmt.Errorf("%d conversations for %d pieces", len(c.Conv16), n)
	case n > 0 && s.MaxGroup() >= files:
		return fmt.Errorf("a piece of file %d of %d", s.MaxGroup(), files)
	}
	for _, id := range c.ConvIDs {
		if id >= convs {
			return fmt.Errorf("conversation %d of %d", id, convs)
		}
	}
	if c.Wide.Len() > 0 && c.Wide.Last() >= uint32(n) || c.ToldHash.Len() > 0 && c.ToldHash.Last() >= uint32(n) {
		return fmt.Errorf("a wide value or told hash past the pieces")
	}
	if lazy {
		return nil
	}
	far := 0
	for d, step := range c.LineStep {
		if step != corpus.FarMark {
			continue
		}
		if far >= len(c.FarLines) || c.FarLines[far].Doc != uint32(d) {
			return fmt.Errorf("no far line for piece %d", d)
		}
		far++
	}
	if far != len(c.FarLines) {
		return fmt.Errorf("%d far lines for %d pieces", len(c.FarLines), far)
	}
	for _, id := range c.Conv32 {
		if id >= convs {
			return fmt.Errorf("conversation %d of %d", id, convs)
		}
	}
	for _, i := range c.Conv16 {
		if int(i) >= len(c.ConvIDs) {
			return fmt.Errorf("conversation index %d of %d", i, len(c.ConvIDs))
		}
	}
	return nil
}
