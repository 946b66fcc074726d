package retriever

// This file holds the pieces' own columns in a segment (file runs, lines,
// offsets, conversations, reading flags) and how they are narrowed.

import (
	"cmp"
	"slices"
)

const (
	flagReadingMask = 0b11 // note, told, said
	flagUnfielded   = 1 << 2
	flagMasked      = 1 << 3
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

// fileRun says that pieces from lo on (up to the next run) are of file.
type fileRun struct {
	lo, file uint32
}

// wideMark stands in a 16-bit column for a value kept in wide.
const wideMark = 0xffff

func (s *segment) fileOf(d uint32) uint32 {
	i, _ := slices.BinarySearchFunc(s.fileRuns, d+1, func(r fileRun, t uint32) int { return cmp.Compare(r.lo, t) })
	return s.fileRuns[i-1].file
}

// lineGroup is how many pieces share a base line. Pieces of a file are in
// line order and a line has a piece or a few, so a piece's line is a step of
// a byte from its group's base nearly always: a byte and a bit a piece, not
// four.
const lineGroup = 64

// farMark stands in lineStep for a line kept in farLine.
const farMark = 0xff

func (s *segment) lineOf(d uint32) uint32 {
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
func (s *segment) narrowLines(line []uint32) {
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

func (s *segment) startOf(d uint32) uint32 {
	if v := s.start16[d]; v != wideMark {
		return uint32(v)
	}
	return s.wide[d][0]
}

func (s *segment) blenOf(d uint32) uint32 {
	if v := s.blen16[d]; v != wideMark {
		return uint32(v)
	}
	return s.wide[d][1]
}

func (s *segment) convOf(d uint32) uint32 {
	if s.conv32 != nil {
		return s.conv32[d]
	}
	return s.convs[s.conv16[d]]
}

// rawColumns are the columns of pieces as a builder collects them.
type rawColumns struct {
	hash  []uint64
	file  []uint32
	line  []uint32
	start []uint32
	blen  []uint32
	dl    []uint16
	conv  []uint32
	flags []uint8

	masked   map[uint32]string
	toldHash map[uint32]uint64
}

// narrow lays raw columns out as a segment's.
func (s *segment) narrow(src *rawColumns) {
	s.hash, s.flags = slices.Clone(src.hash), slices.Clone(src.flags)
	s.narrowLines(src.line)
	s.dl = make([]uint8, len(src.dl))
	for d, l := range src.dl {
		if l >= longMark {
			if s.longDL == nil {
				s.longDL = map[uint32]uint16{}
			}
			s.longDL[uint32(d)], l = l, longMark
		}
		s.dl[d] = uint8(l)
	}
	s.masked, s.toldHash = src.masked, src.toldHash
	n := len(src.hash)
	for d := 0; d < n; d++ {
		if d == 0 || src.file[d] != src.file[d-1] {
			s.fileRuns = append(s.fileRuns, fileRun{lo: uint32(d), file: src.file[d]})
		}
	}
	s.fileRuns = slices.Clip(s.fileRuns)
	s.start16, s.blen16 = make([]uint16, n), make([]uint16, n)
	for d := 0; d < n; d++ {
		st, bl := src.start[d], src.blen[d]
		if st >= wideMark || bl >= wideMark {
			if s.wide == nil {
				s.wide = map[uint32][2]uint32{}
			}
			s.wide[uint32(d)] = [2]uint32{st, bl}
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
