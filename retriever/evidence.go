package retriever

// This file holds the evidence rules of a request (spec §5) as the scoring
// paths consult them: filter, and evidenceFilter, the bm25.Filter that
// applies it, deciding once a file run what depends on the file.

import (
	"go.uber.org/zap"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
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
	window       timeWindow // from/to: only records whose time is within it

	// A partial answer's (confirm.go): the files found changed since they
	// were indexed, left out, and what was found of each file.
	exclude map[*corpus.File]bool
	confirm *confirmation
}

// evidenceFilter is the bm25.Filter of a request: its rules, over the
// pieces of the agent searched (agent < 0: every agent's). A segment's
// group is its pieces' file id, and the engine names a segment by its place
// in ix.segments.
type evidenceFilter struct {
	ix    *Index
	f     *filter
	agent int
}

// Accept reports whether live piece d of file id is evidence for the
// request.
func (e *evidenceFilter) Accept(seg int, d, id uint32) bool {
	fs := e.ix.state.File(id)
	return fs != nil && (e.agent < 0 || int(fs.Agent) == e.agent) && e.evidence(e.ix.state.Segments[seg], d, fs)
}

// Group decides from the file alone what it can for its pieces.
func (e *evidenceFilter) Group(_ int, id uint32) bm25.Verdict {
	return fileVerdict(&e.ix.state, e.ix.state.File(id), e.agent, e.f)
}

// Check applies the piece-level rules to piece d of file id.
func (e *evidenceFilter) Check(seg int, d, id uint32) bool {
	return e.evidence(e.ix.state.Segments[seg], d, e.ix.state.ByID[id])
}

// fileVerdict decides what it can of the evidence rules from the file alone.
func fileVerdict(c *corpus.State, fs *corpus.File, agent int, f *filter) bm25.Verdict {
	if fs == nil || (agent >= 0 && int(fs.Agent) != agent) || f.excluded(fs) {
		return bm25.RejectAll
	}
	if f.all {
		return bm25.AcceptAll
	}
	current := f.episode != "" && fs.EpNum() == f.episode
	switch {
	case f.scopeEpisode && !current:
		return bm25.RejectAll
	case !fs.Form.IsRecord() && f.window.on:
		return bm25.RejectAll // a plain file's lines have no time
	case !fs.Conversational() && f.window.on:
		return bm25.CheckEach // a foreign log's records have times
	case !fs.Conversational():
		return bm25.AcceptAll
	case !f.records:
		return bm25.RejectAll
	case !current && !f.hasTurn && !f.window.on:
		return bm25.AcceptAll
	}
	return bm25.CheckEach
}

// evidence applies the request's rules to one piece (spec §5).
func (e *evidenceFilter) evidence(s *corpus.Segment, d uint32, fs *corpus.File) bool {
	f := e.f
	if f.excluded(fs) {
		return false
	}
	if f.all {
		return true
	}
	current := f.episode != "" && fs.EpNum() == f.episode
	if f.scopeEpisode && !current {
		return false
	}
	if f.window.on && !inWindow(fs, s.LineOf(d), f.window) {
		return false
	}
	if !fs.Conversational() {
		return true // a note, or a foreign log's record read as one (spec §2)
	}
	if !f.records {
		return false
	}
	if current {
		if s.FlagsOf(d)&corpus.FlagUnfielded != 0 {
			if fs.Warned().Unfielded.CompareAndSwap(false, true) {
				e.ix.log.Warn("lines without the conversation field in the current episode are not evidence", zap.String("file", fs.Rel))
			}
			return false
		}
		c := s.ConvOf(d)
		if !(f.hasConv && c == f.conv) && c != f.dash && !f.allConvs {
			return false
		}
	}
	if f.hasTurn && s.FlagsOf(d)&corpus.FlagReadingMask == flagOfReading(ReadingTold) && s.ToldHashOf(d) == f.turnHash {
		return false
	}
	return true
}

// warnUnfielded gives the WARN of spec §5 rule 4 for every record file of
// the current episode (of the agent searched, "": any) that holds an
// unfielded line, once a file, whether or not the query matched that line:
// a user whose search skips such records is told so even when nothing of
// them would have ranked. It looks at the files once a committed state and
// episode (the fact memo); the caller holds the read lock.
func (ix *Index) warnUnfielded(f *filter, agent string) {
	id, known := ix.state.AgentIDs[agent]
	if !f.records || f.episode == "" || (agent != "" && !known) {
		return
	}
	ix.state.Known(corpus.Fact{Kind: corpus.FactUnfielded, Name: agent, Episode: f.episode}, func() bool {
		for _, fs := range ix.state.Files {
			if fs.EpNum() != f.episode || !fs.Form.IsRecord() || (agent != "" && fs.Agent != id) {
				continue
			}
			// ColumnsOnce: a restored file's table read for this alone, not
			// kept on the heap (every record file of the episode is asked).
			if _, t := fs.ColumnsOnce(); len(t.Runs()) > 0 && fs.Warned().Unfielded.CompareAndSwap(false, true) {
				ix.log.Warn("lines without the conversation field in the current episode are not evidence", zap.String("file", fs.Rel))
			}
		}
		return true
	})
}

// inWindow reports whether the record that holds line n has a time within w
// (a plain file's lines and a line before a file's first record have none).
func inWindow(fs *corpus.File, n uint32, w timeWindow) bool {
	if !fs.Form.IsRecord() {
		return false
	}
	t := fs.Records()
	i := t.RecordAt(n)
	return i >= 0 && records.MetaKind(t.Meta(i)) != records.KindBeforeFirst && w.holds(t.Time(i))
}
