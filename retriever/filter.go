package retriever

// This file holds the seam between the scoring paths and the rules of what
// may be a hit: the scoring paths know documents of segments and ask a
// docFilter, only for documents whose score can still enter the top k.

import (
	"cmp"
	"slices"
)

// docFilter says which documents of a segment may be hits, and tags each it
// accepts with a value of its own that the hit keeps (retriever's: the
// piece's file id), so that the tie order and the results read it without
// looking the document up again. Its rules are asked once a run of a
// segment's documents (fileRuns) where they can be, a document at a time
// only where they cannot.
type docFilter interface {
	// runVerdict decides what it can for the documents of s's run i
	// (rejectRun, acceptRun or checkPiece) and gives the run's tag.
	runVerdict(s *segment, i int) (verdict int, tag uint32)
	// check decides for a live document d of a run whose verdict is
	// checkPiece, tag being the run's.
	check(s *segment, d, tag uint32) bool
	// accept reports whether document d of s may be a hit, asked in any
	// order, and its tag.
	accept(s *segment, d uint32) (bool, uint32)
}

// Verdicts of a docFilter on a run of a segment's documents.
const (
	rejectRun  = iota // no document of the run may be a hit
	acceptRun         // every live document may
	checkPiece        // check decides, a document at a time
)

// docCursor answers for the documents of one segment asked in increasing
// order, so that what holds for a run of documents is asked once a run. It
// is a value of the scoring path that walks the segment: asking it is a
// direct call, and making one allocates nothing.
type docCursor struct {
	f       docFilter
	s       *segment
	next    uint32 // the next run's first document
	tag     uint32 // the current run's
	verdict int
}

// newDocCursor returns a cursor over s's documents, at its first run.
func newDocCursor(f docFilter, s *segment) docCursor {
	c := docCursor{f: f, s: s}
	c.enter(0)
	return c
}

func (c *docCursor) enter(i int) {
	c.next = ^uint32(0)
	if i+1 < len(c.s.fileRuns) {
		c.next = c.s.fileRuns[i+1].lo
	}
	c.verdict, c.tag = c.f.runVerdict(c.s, i)
}

// at reports whether document d (at or after the last one asked) is alive
// and may be a hit, and its tag.
func (c *docCursor) at(d uint32) (bool, uint32) {
	if d >= c.next {
		i, _ := slices.BinarySearchFunc(c.s.fileRuns, d+1, func(r fileRun, t uint32) int { return cmp.Compare(r.lo, t) })
		c.enter(i - 1)
	}
	switch {
	case c.verdict == rejectRun || c.s.isDead(d):
		return false, 0
	case c.verdict == acceptRun:
		return true, c.tag
	}
	return c.f.check(c.s, d, c.tag), c.tag
}
