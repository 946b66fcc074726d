package retriever

// This file holds the evidence rules of a request (spec §5) as the scoring
// paths consult them: filter, the per-piece candidate check, and runCursor,
// which decides once a file run what depends on the file.

import (
	"cmp"
	"slices"

	"go.uber.org/zap"
)

// filter is the evidence rules of a request (spec §5).
type filter struct {
	all          bool   // workspace symbols: every indexed piece
	episode      string // current episode number, "" for none
	scopeEpisode bool
	records      bool // record files are evidence (episode and conversation given)
	conv, dash   uint32
	hasConv      bool
	allConvs     bool // every conversation of the current episode
	turnHash     uint64
	hasTurn      bool
}

// candidate reports whether a piece is alive and evidence for the request.
func (ix *Index) candidate(s *segment, d uint32, q *query, f *filter) (bool, *fileState) {
	if s.isDead(d) {
		return false, nil
	}
	fs := ix.file(s.fileOf(d))
	if fs == nil || (q.agent >= 0 && int(fs.agent) != q.agent) || !ix.evidence(f, s, d, fs) {
		return false, nil
	}
	return true, fs
}

// file returns the committed state of a file id, or nil: the pieces of a
// read that was discarded (the file failed half-way) name a file that is not.
func (ix *Index) file(id uint32) *fileState {
	if int(id) < len(ix.byID) {
		return ix.byID[id]
	}
	return nil
}

// Verdicts of the file-level rules on a run of a segment's pieces.
const (
	rejectRun  = iota // no piece of the file is evidence
	acceptRun         // every live piece is
	checkPiece        // the piece-level rules decide
)

// runCursor applies the evidence rules to pieces met in increasing order:
// what depends on the file is decided once a run, not once a piece.
type runCursor struct {
	ix      *Index
	s       *segment
	q       *query
	f       *filter
	i       int // current run
	next    uint32
	fs      *fileState
	verdict int
}

func newRunCursor(ix *Index, s *segment, q *query, f *filter) *runCursor {
	c := &runCursor{ix: ix, s: s, q: q, f: f, i: -1}
	c.enter(0)
	return c
}

func (c *runCursor) enter(i int) {
	c.i = i
	c.next = ^uint32(0)
	if i+1 < len(c.s.fileRuns) {
		c.next = c.s.fileRuns[i+1].lo
	}
	c.fs = c.ix.file(c.s.fileRuns[i].file)
	c.verdict = c.ix.fileVerdict(c.fs, c.q, c.f)
}

// at reports whether piece d (at or after the last one asked) is alive and
// evidence, and its file.
func (c *runCursor) at(d uint32) (bool, *fileState) {
	if d >= c.next {
		i, _ := slices.BinarySearchFunc(c.s.fileRuns, d+1, func(r fileRun, t uint32) int { return cmp.Compare(r.lo, t) })
		c.enter(i - 1)
	}
	switch {
	case c.verdict == rejectRun || c.s.isDead(d):
		return false, nil
	case c.verdict == acceptRun:
		return true, c.fs
	}
	return c.ix.evidence(c.f, c.s, d, c.fs), c.fs
}

// fileVerdict decides what it can of the evidence rules from the file alone.
func (ix *Index) fileVerdict(fs *fileState, q *query, f *filter) int {
	if fs == nil || (q.agent >= 0 && int(fs.agent) != q.agent) {
		return rejectRun
	}
	if f.all {
		return acceptRun
	}
	current := f.episode != "" && fs.epNum == f.episode
	switch {
	case f.scopeEpisode && !current:
		return rejectRun
	case !fs.form.IsRecord():
		return acceptRun
	case !f.records:
		return rejectRun
	case !current && !f.hasTurn:
		return acceptRun
	}
	return checkPiece
}

// evidence applies the request's rules to one piece (spec §5).
func (ix *Index) evidence(f *filter, s *segment, d uint32, fs *fileState) bool {
	if f.all {
		return true
	}
	current := f.episode != "" && fs.epNum == f.episode
	if f.scopeEpisode && !current {
		return false
	}
	if !fs.form.IsRecord() {
		return true
	}
	if !f.records {
		return false
	}
	if current {
		if s.flags[d]&flagUnfielded != 0 {
			if fs.warned.unfielded.CompareAndSwap(false, true) {
				ix.log.Warn("lines without the conversation field in the current episode are not evidence", zap.String("file", fs.rel))
			}
			return false
		}
		c := s.convOf(d)
		if !(f.hasConv && c == f.conv) && c != f.dash && !f.allConvs {
			return false
		}
	}
	if f.hasTurn && s.flags[d]&flagReadingMask == flagOfReading(ReadingTold) && s.toldHash[d] == f.turnHash {
		return false
	}
	return true
}

func (ix *Index) lookupConv(name string) (uint32, bool) {
	ix.convMu.Lock()
	defer ix.convMu.Unlock()
	id, ok := ix.convIDs[name]
	return id, ok
}
