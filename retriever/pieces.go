package retriever

// This file holds the pieces' own columns in a segment (lines, offsets,
// conversations, reading flags, masked text, told-message hashes): how a
// builder collects them, how they are narrowed, and how a merge moves them.

import (
	"cmp"
	"slices"

	"runls/retriever/internal/bm25"
)

const (
	flagReadingMask = 0b11 // note, told, said
	flagUnfielded   = 1 << 2
	flagMasked      = 1 << 3
	// flagProse: the piece is part of a JSON line's prose (spec §2 "JSON
	// lines"); its start and length are offsets in that prose, and its
	// location is the whole line.
	flagProse = 1 << 4
)

var readingOfFlag = [...]Reading{ReadingNote, ReadingTold, ReadingSaid, ReadingNote}

func flagOfReading(r Reading) uint8 {
	switch r {
	case ReadingTold:
		return 1
	case ReadingSaid:
		return 2
	}
	return 0
}

// pieceColumns are the columns a segment keeps of each piece besides the
// engine's, never the text: the text is read again from the file for the
// few pieces a search returns. The columns are narrowed where the values
// allow (16-bit offsets and conversations, line steps of a byte, with the
// rare wide value aside), since with postings they are most of the index's
// memory.
type pieceColumns struct {
	// 0-based line: lineBase[d/lineGroup] + lineStep[d], or farLine[d]
	// where the step does not fit a byte (see lineOf)
	lineBase []uint32
	lineStep []uint8
	farLine  []farLine // by piece, ascending
	flags    []uint8

	start16 []uint16               // byte offset of the piece in its line, as written in the file
	blen16  []uint16               // byte length of the piece in the file
	wide    bm25.Sparse[[2]uint32] // start and length of pieces that do not fit 16 bits
	conv16  []uint16               // index into convs
	convs   []uint32               // conversation ids (0: none, plain files and unfielded records)
	conv32  []uint32               // the ids themselves, in a batch with too many for conv16

	masked   bm25.Sparse[string] // text of pieces whose text differs from the file's (masking)
	toldHash bm25.Sparse[uint64] // hash of the whole trimmed message of told pieces
}

// wideMark stands in a 16-bit column for a value kept in wide.
const wideMark = 0xffff

// lineGroup is how many pieces share a base line. Pieces of a file are in
// line order and a line has a piece or a few, so a piece's line is a step of
// a byte from its group's base nearly always: a byte and a bit a piece, not
// four.
const lineGroup = 64

// farMark stands in lineStep for a line kept in farLine.
const farMark = 0xff

func (s *pieceColumns) lineOf(d uint32) uint32 {
	if v := s.lineStep[d]; v != farMark {
		return s.lineBase[d/lineGroup] + uint32(v)
	}
	i, _ := slices.BinarySearchFunc(s.farLine, d, func(e farLine, d uint32) int { return cmp.Compare(e.doc, d) })
	return s.farLine[i].line
}

// farLine is the line of a piece whose step from its group's base does not
// fit a byte: in a group that spans the end of a long file and the start of
// the next. A slice, not a map: a run of many such files keeps 8 bytes each.
type farLine struct{ doc, line uint32 }

// narrowLines lays out the line column: each group's base is its smallest
// line (groups can span files, whose lines start again at 0).
func (s *pieceColumns) narrowLines(line []uint32) {
	s.lineBase = make([]uint32, (len(line)+lineGroup-1)/lineGroup)
	s.lineStep = make([]uint8, len(line))
	for g := range s.lineBase {
		s.lineBase[g] = slices.Min(line[g*lineGroup : min(len(line), (g+1)*lineGroup)])
	}
	for d, l := range line {
		step := l - s.lineBase[d/lineGroup]
		if step >= farMark {
			s.farLine = append(s.farLine, farLine{uint32(d), l})
			step = farMark
		}
		s.lineStep[d] = uint8(step)
	}
}

func (s *pieceColumns) startOf(d uint32) uint32 {
	if v := s.start16[d]; v != wideMark {
		return uint32(v)
	}
	w, _ := s.wide.Get(d)
	return w[0]
}

func (s *pieceColumns) blenOf(d uint32) uint32 {
	if v := s.blen16[d]; v != wideMark {
		return uint32(v)
	}
	w, _ := s.wide.Get(d)
	return w[1]
}

func (s *pieceColumns) convOf(d uint32) uint32 {
	if s.conv32 != nil {
		return s.conv32[d]
	}
	return s.convs[s.conv16[d]]
}

// rawColumns are the columns of pieces as a builder collects them.
type rawColumns struct {
	line  []uint32
	start []uint32
	blen  []uint32
	conv  []uint32
	flags []uint8

	masked   bm25.Sparse[string]
	toldHash bm25.Sparse[uint64]
}

// narrow lays raw columns out as a segment's.
func (s *pieceColumns) narrow(src *rawColumns) {
	s.flags = slices.Clone(src.flags)
	s.narrowLines(src.line)
	s.masked, s.toldHash = src.masked, src.toldHash
	s.masked.Clip()
	s.toldHash.Clip()
	n := len(src.flags)
	s.start16, s.blen16 = make([]uint16, n), make([]uint16, n)
	for d := 0; d < n; d++ {
		st, bl := src.start[d], src.blen[d]
		if st >= wideMark || bl >= wideMark {
			s.wide.Set(uint32(d), [2]uint32{st, bl})
			s.start16[d], s.blen16[d] = wideMark, wideMark
			continue
		}
		s.start16[d], s.blen16[d] = uint16(st), uint16(bl)
	}
	// Conversations: a batch rarely holds more distinct ids than 16 bits
	// number; one that does keeps them whole.
	index := map[uint32]uint16{}
	s.conv16 = make([]uint16, n)
	for d := 0; d < n; d++ {
		c := src.conv[d]
		i, ok := index[c]
		if !ok {
			if len(s.convs) == 1<<16 {
				s.conv16, s.convs, s.conv32 = nil, nil, slices.Clone(src.conv)
				return
			}
			i = uint16(len(s.convs))
			index[c] = i
			s.convs = append(s.convs, c)
		}
		s.conv16[d] = i
	}
}

// docColumns are the columns of one piece.
type docColumns struct {
	hash  uint64
	file  uint32
	line  uint32
	start uint32
	blen  uint32
	conv  uint32
	flags uint8
}

// add appends one piece's columns.
func (r *rawColumns) add(d docColumns) {
	r.line = append(r.line, d.line)
	r.start = append(r.start, d.start)
	r.blen = append(r.blen, d.blen)
	r.conv = append(r.conv, d.conv)
	r.flags = append(r.flags, d.flags)
}

// reserve makes room for p more pieces.
func (r *rawColumns) reserve(p int) {
	r.line, r.start, r.blen = slices.Grow(r.line, p), slices.Grow(r.start, p), slices.Grow(r.blen, p)
	r.conv, r.flags = slices.Grow(r.conv, p), slices.Grow(r.flags, p)
}

// addFrom appends the columns of piece d of s, which becomes piece n.
func (r *rawColumns) addFrom(s *pieceColumns, d, n uint32) {
	r.line = append(r.line, s.lineOf(d))
	r.start = append(r.start, s.startOf(d))
	r.blen = append(r.blen, s.blenOf(d))
	r.conv = append(r.conv, s.convOf(d))
	r.flags = append(r.flags, s.flags[d])
	if t, ok := s.masked.Get(d); ok {
		r.masked.Set(n, t)
	}
	if h, ok := s.toldHash.Get(d); ok {
		r.toldHash.Set(n, h)
	}
}

// footprint returns the bytes the columns take (capacity of their slices,
// 16 bytes a wide entry).
func (s *pieceColumns) footprint() int64 {
	return int64(cap(s.lineBase)+cap(s.convs)+cap(s.conv32))*4 +
		int64(cap(s.lineStep)) + int64(cap(s.farLine))*8 +
		int64(cap(s.start16)+cap(s.blen16)+cap(s.conv16))*2 + int64(cap(s.flags)) +
		int64(s.wide.Len())*16
}

// toldHashOf returns the hash of told piece d's whole trimmed message (0
// for other pieces).
func (s *pieceColumns) toldHashOf(d uint32) uint64 {
	h, _ := s.toldHash.Get(d)
	return h
}
