package corpus

// This file holds the pieces' own columns in a segment (lines, offsets,
// conversations, reading flags, masked text, told-message hashes): how a
// builder collects them, how they are narrowed, and how a merge moves them.

import (
	"cmp"
	"fmt"
	"slices"

	"runls/retriever/internal/bm25"
)

const (
	FlagReadingMask = 0b11 // note, told, said
	FlagUnfielded   = 1 << 2
	FlagMasked      = 1 << 3
	// FlagProse: the piece is part of a JSON line's prose (spec §2 "JSON
	// lines"); its start and length are offsets in that prose, and its
	// location is the whole line.
	FlagProse = 1 << 4
)

// Columns are the columns a segment keeps of each piece besides the
// engine's, never the text: the text is read again from the file for the
// few pieces a search returns. The columns are narrowed where the values
// allow (16-bit offsets and conversations, line steps of a byte, with the
// rare wide value aside), since with postings they are most of the index's
// memory.
type Columns struct {
	// 0-based line: LineBase[d/LineGroup] + LineStep[d], or FarLines[d]
	// where the step does not fit a byte (see LineOf)
	LineBase []uint32
	LineStep []uint8
	FarLines []FarLine // by piece, ascending
	Flags    []uint8

	Start16 []uint16               // byte offset of the piece in its line, as written in the file
	Blen16  []uint16               // byte length of the piece in the file
	Wide    bm25.Sparse[[2]uint32] // start and length of pieces that do not fit 16 bits
	Conv16  []uint16               // index into convs
	ConvIDs []uint32               // conversation ids (0: none, plain files and unfielded records)
	Conv32  []uint32               // the ids themselves, in a batch with too many for conv16

	Masked   bm25.Sparse[string] // text of pieces whose text differs from the file's (masking)
	ToldHash bm25.Sparse[uint64] // hash of the whole trimmed message of told pieces

	lazy *columnChecks // read back lazily: a piece's values checked at their first use
}

// columnChecks is what the columns of a segment read back lazily (a
// mapped cache blob checked by range, bm25.Backing) check of a piece at
// its first use: its bytes in each column read, and the values an index is
// made of (a conversation's, a far line's), as the decode checks them of
// columns read whole.
type columnChecks struct {
	back  bm25.Backing
	convs uint32 // conversation ids the index holds
}

// SetBacking makes the columns check each piece's values through back at
// their first use; convs is how many conversation ids the index holds.
// The caller has checked the small columns whole (FarLines, Wide, ConvIDs,
// Masked, ToldHash), their values too.
func (s *Columns) SetBacking(back bm25.Backing, convs uint32) {
	s.lazy = &columnChecks{back: back, convs: convs}
}

// FlagsOf returns piece d's flags.
func (s *Columns) FlagsOf(d uint32) uint8 {
	if s.lazy != nil {
		bm25.CheckValue(s.lazy.back, s.Flags, int(d))
	}
	return s.Flags[d]
}

// Touch reads piece d's values of the columns a result's item reads
// (LineOf, StartOf, BlenOf, FlagsOf, ConvOf), unchecked: line is its line
// when its step from its group's base fits a byte (else the base and the
// far mark: near it), rest the other values folded into one. A hint, never
// an answer: a pass that touches every hit's first lets the processor fetch
// them side by side, where each hit's reads, between the checks,
// allocations and formatting of its item, were made one after the other
// (issue 33). A piece out of the columns touches nothing.
func (s *Columns) Touch(d uint32) (line, rest uint32) {
	if int(d) >= len(s.LineStep) || int(d/LineGroup) >= len(s.LineBase) || int(d) >= len(s.Start16) ||
		int(d) >= len(s.Blen16) || int(d) >= len(s.Flags) {
		return 0, 0
	}
	line = s.LineBase[d/LineGroup] + uint32(s.LineStep[d])
	rest = uint32(s.Start16[d]) ^ uint32(s.Blen16[d]) ^ uint32(s.Flags[d])
	if int(d) < len(s.Conv32) {
		rest ^= s.Conv32[d]
	} else if int(d) < len(s.Conv16) {
		rest ^= uint32(s.Conv16[d])
	}
	return line, rest
}

// wideMark stands in a 16-bit column for a value kept in Wide.
const wideMark = 0xffff

// LineGroup is how many pieces share a base line. Pieces of a file are in
// line order and a line has a piece or a few, so a piece's line is a step of
// a byte from its group's base nearly always: a byte and a bit a piece, not
// four.
const LineGroup = 64

// FarMark stands in LineStep for a line kept in FarLines.
const FarMark = 0xff

func (s *Columns) LineOf(d uint32) uint32 {
	if s.lazy != nil {
		bm25.CheckValue(s.lazy.back, s.LineStep, int(d))
	}
	if v := s.LineStep[d]; v != FarMark {
		if s.lazy != nil {
			bm25.CheckValue(s.lazy.back, s.LineBase, int(d/LineGroup))
		}
		return s.LineBase[d/LineGroup] + uint32(v)
	}
	i, ok := slices.BinarySearchFunc(s.FarLines, d, func(e FarLine, d uint32) int { return cmp.Compare(e.Doc, d) })
	if !ok && s.lazy != nil {
		s.lazy.back.Corrupt(fmt.Errorf("no far line for piece %d", d))
	}
	return s.FarLines[i].Line
}

// FarLine is the line of a piece whose step from its group's base does not
// fit a byte: in a group that spans the end of a long file and the start of
// the next. A slice, not a map: a run of many such files keeps 8 bytes each.
type FarLine struct{ Doc, Line uint32 }

// narrowLines lays out the line column: each group's base is its smallest
// line (groups can span files, whose lines start again at 0).
func (s *Columns) narrowLines(line []uint32) {
	s.LineBase = make([]uint32, (len(line)+LineGroup-1)/LineGroup)
	s.LineStep = make([]uint8, len(line))
	for g := range s.LineBase {
		s.LineBase[g] = slices.Min(line[g*LineGroup : min(len(line), (g+1)*LineGroup)])
	}
	for d, l := range line {
		step := l - s.LineBase[d/LineGroup]
		if step >= FarMark {
			s.FarLines = append(s.FarLines, FarLine{uint32(d), l})
			step = FarMark
		}
		s.LineStep[d] = uint8(step)
	}
}

func (s *Columns) StartOf(d uint32) uint32 {
	if s.lazy != nil {
		bm25.CheckValue(s.lazy.back, s.Start16, int(d))
	}
	if v := s.Start16[d]; v != wideMark {
		return uint32(v)
	}
	w, _ := s.Wide.Get(d)
	return w[0]
}

func (s *Columns) BlenOf(d uint32) uint32 {
	if s.lazy != nil {
		bm25.CheckValue(s.lazy.back, s.Blen16, int(d))
	}
	if v := s.Blen16[d]; v != wideMark {
		return uint32(v)
	}
	w, _ := s.Wide.Get(d)
	return w[1]
}

func (s *Columns) ConvOf(d uint32) uint32 {
	if s.lazy != nil {
		return s.lazyConvOf(d)
	}
	if s.Conv32 != nil {
		return s.Conv32[d]
	}
	return s.ConvIDs[s.Conv16[d]]
}

// lazyConvOf is ConvOf of columns read back lazily.
func (s *Columns) lazyConvOf(d uint32) uint32 {
	z := s.lazy
	if s.Conv32 != nil {
		bm25.CheckValue(z.back, s.Conv32, int(d))
		if c := s.Conv32[d]; c < z.convs {
			return c
		}
	} else {
		bm25.CheckValue(z.back, s.Conv16, int(d))
		if i := s.Conv16[d]; int(i) < len(s.ConvIDs) {
			return s.ConvIDs[i]
		}
	}
	z.back.Corrupt(fmt.Errorf("piece %d's conversation", d))
	return 0
}

// RawColumns are the columns of pieces as a builder collects them.
type RawColumns struct {
	Line  []uint32
	Start []uint32
	Blen  []uint32
	Conv  []uint32
	Flags []uint8

	Masked   bm25.Sparse[string]
	ToldHash bm25.Sparse[uint64]
}

// Narrow lays raw columns out as a segment's.
func (s *Columns) Narrow(src *RawColumns) {
	s.Flags = slices.Clone(src.Flags)
	s.narrowLines(src.Line)
	s.Masked, s.ToldHash = src.Masked, src.ToldHash
	s.Masked.Clip()
	s.ToldHash.Clip()
	n := len(src.Flags)
	s.Start16, s.Blen16 = make([]uint16, n), make([]uint16, n)
	for d := 0; d < n; d++ {
		st, bl := src.Start[d], src.Blen[d]
		if st >= wideMark || bl >= wideMark {
			s.Wide.Set(uint32(d), [2]uint32{st, bl})
			s.Start16[d], s.Blen16[d] = wideMark, wideMark
			continue
		}
		s.Start16[d], s.Blen16[d] = uint16(st), uint16(bl)
	}
	// Conversations: a batch rarely holds more distinct ids than 16 bits
	// number; one that does keeps them whole.
	index := map[uint32]uint16{}
	s.Conv16 = make([]uint16, n)
	for d := 0; d < n; d++ {
		c := src.Conv[d]
		i, ok := index[c]
		if !ok {
			if len(s.ConvIDs) == 1<<16 {
				s.Conv16, s.ConvIDs, s.Conv32 = nil, nil, slices.Clone(src.Conv)
				return
			}
			i = uint16(len(s.ConvIDs))
			index[c] = i
			s.ConvIDs = append(s.ConvIDs, c)
		}
		s.Conv16[d] = i
	}
}

// Piece is the columns of one piece.
type Piece struct {
	Hash  uint64
	File  uint32
	Line  uint32
	Start uint32
	Blen  uint32
	Conv  uint32
	Flags uint8
}

// Add appends one piece's columns.
func (r *RawColumns) Add(d Piece) {
	r.Line = append(r.Line, d.Line)
	r.Start = append(r.Start, d.Start)
	r.Blen = append(r.Blen, d.Blen)
	r.Conv = append(r.Conv, d.Conv)
	r.Flags = append(r.Flags, d.Flags)
}

// Reserve makes room for p more pieces.
func (r *RawColumns) Reserve(p int) {
	r.Line, r.Start, r.Blen = slices.Grow(r.Line, p), slices.Grow(r.Start, p), slices.Grow(r.Blen, p)
	r.Conv, r.Flags = slices.Grow(r.Conv, p), slices.Grow(r.Flags, p)
}

// AddFrom appends the columns of piece d of s, which becomes piece n.
func (r *RawColumns) AddFrom(s *Columns, d, n uint32) {
	r.Line = append(r.Line, s.LineOf(d))
	r.Start = append(r.Start, s.StartOf(d))
	r.Blen = append(r.Blen, s.BlenOf(d))
	r.Conv = append(r.Conv, s.ConvOf(d))
	r.Flags = append(r.Flags, s.FlagsOf(d))
	if t, ok := s.Masked.Get(d); ok {
		r.Masked.Set(n, t)
	}
	if h, ok := s.ToldHash.Get(d); ok {
		r.ToldHash.Set(n, h)
	}
}

// ColumnBytes returns the bytes the columns take (capacity of their slices,
// 16 bytes a wide entry).
func (s *Columns) ColumnBytes() int64 {
	return int64(cap(s.LineBase)+cap(s.ConvIDs)+cap(s.Conv32))*4 +
		int64(cap(s.LineStep)) + int64(cap(s.FarLines))*8 +
		int64(cap(s.Start16)+cap(s.Blen16)+cap(s.Conv16))*2 + int64(cap(s.Flags)) +
		int64(s.Wide.Len())*16
}

// ToldHashOf returns the hash of told piece d's whole trimmed message (0
// for other pieces).
func (s *Columns) ToldHashOf(d uint32) uint64 {
	h, _ := s.ToldHash.Get(d)
	return h
}
