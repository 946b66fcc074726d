package retriever

// This file holds the evidence rules of a request (spec §5) as the scoring
// paths consult them: filter, and evidenceFilter, the docFilter that applies
// it, deciding once a file run what depends on the file.

import "go.uber.org/zap"

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

// evidenceFilter is the docFilter of a request: its rules, over the pieces
// of the agent searched (agent < 0: every agent's).
type evidenceFilter struct {
	ix    *Index
	f     *filter
	agent int
}

// accept reports whether a piece is alive and evidence for the request, and
// its file id.
func (e *evidenceFilter) accept(s *segment, d uint32) (bool, uint32) {
	if s.isDead(d) {
		return false, 0
	}
	id := s.fileOf(d)
	fs := e.ix.file(id)
	return fs != nil && (e.agent < 0 || int(fs.agent) == e.agent) && e.ix.evidence(e.f, s, d, fs), id
}

// runVerdict decides from the file alone what it can for the pieces of
// s's run i, and gives the file id as the run's tag.
func (e *evidenceFilter) runVerdict(s *segment, i int) (int, uint32) {
	id := s.fileRuns[i].file
	return e.ix.fileVerdict(e.ix.file(id), e.agent, e.f), id
}

// check applies the piece-level rules to piece d of file id.
func (e *evidenceFilter) check(s *segment, d, id uint32) bool {
	return e.ix.evidence(e.f, s, d, e.ix.byID[id])
}

// file returns the committed state of a file id, or nil: the pieces of a
// read that was discarded (the file failed half-way) name a file that is not.
func (ix *Index) file(id uint32) *fileState {
	if int(id) < len(ix.byID) {
		return ix.byID[id]
	}
	return nil
}

// fileVerdict decides what it can of the evidence rules from the file alone.
func (ix *Index) fileVerdict(fs *fileState, agent int, f *filter) int {
	if fs == nil || (agent >= 0 && int(fs.agent) != agent) {
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
