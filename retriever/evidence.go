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
// in ix.segments. What it reads of a file is the file's key
// (corpus.State.Key: eight bytes, eight files a cache line), not the File:
// each cold File was a line of its own and its path's another (issue 33).
type evidenceFilter struct {
	ix    *Index
	f     *filter
	agent int
}

// fileFacts is what the evidence rules read of a file: of its key, or of
// the File when the keys are off (and for the tests' brute force).
type fileFacts struct {
	live           bool // a committed file's
	excluded       bool // left out by a partial answer (confirm.go)
	current        bool // of the request's episode
	record         bool // Form.IsRecord
	conversational bool // File.Conversational
	agent          uint32
}

// factsOfFile is what the rules read of fs (nil: no file).
func factsOfFile(fs *corpus.File, f *filter) fileFacts {
	if fs == nil {
		return fileFacts{}
	}
	return fileFacts{
		live:           true,
		excluded:       f.excluded(fs),
		current:        f.episode != "" && fs.EpNum() == f.episode,
		record:         fs.Form.IsRecord(),
		conversational: fs.Conversational(),
		agent:          fs.Agent,
	}
}

// facts is what the rules read of file id, from its key.
func (e *evidenceFilter) facts(id uint32) fileFacts {
	c := &e.ix.state
	k, ok := c.Key(id)
	if !ok {
		return factsOfFile(c.File(id), e.f)
	}
	// The episode's number compared, not a key of the request's looked up
	// once: the engine asks from two goroutines at once (a parallel
	// search's halves), and the numbers are few, their table in cache.
	return fileFacts{
		live:           k.Live(),
		excluded:       len(e.f.exclude) > 0 && e.f.excluded(c.File(id)),
		current:        k.Live() && e.f.episode != "" && c.EpisodeNum(k.Episode()) == e.f.episode,
		record:         k.Record(),
		conversational: k.Conversational(),
		agent:          k.Agent(),
	}
}

// Accept reports whether live piece d of file id is evidence for the
// request.
func (e *evidenceFilter) Accept(seg int, d, id uint32) bool {
	ff := e.facts(id)
	return ff.live && (e.agent < 0 || int(ff.agent) == e.agent) && e.pieceEvidence(e.ix.state.Segments[seg], d, ff, nil, id)
}

// Group decides from the file alone what it can for its pieces.
func (e *evidenceFilter) Group(_ int, id uint32) bm25.Verdict {
	return verdictOf(e.facts(id), e.agent, e.f)
}

// Check applies the piece-level rules to piece d of file id.
func (e *evidenceFilter) Check(seg int, d, id uint32) bool {
	return e.pieceEvidence(e.ix.state.Segments[seg], d, e.facts(id), nil, id)
}

// verdictOf decides what it can of the evidence rules from a file's facts.
func verdictOf(ff fileFacts, agent int, f *filter) bm25.Verdict {
	if !ff.live || (agent >= 0 && int(ff.agent) != agent) || ff.excluded {
		return bm25.RejectAll
	}
	if f.all {
		return bm25.AcceptAll
	}
	switch {
	case f.scopeEpisode && !ff.current:
		return bm25.RejectAll
	case !ff.record && f.window.on:
		return bm25.RejectAll // a plain file's lines have no time
	case !ff.conversational && f.window.on:
		return bm25.CheckEach // a foreign log's records have times
	case !ff.conversational:
		return bm25.AcceptAll
	case !f.records:
		return bm25.RejectAll
	case !ff.current && !f.hasTurn && !f.window.on:
		return bm25.AcceptAll
	}
	return bm25.CheckEach
}

// pieceEvidence applies the request's rules to piece d of file id, whose
// facts are ff (spec §5); fs is the File, nil when not read yet (read here
// only for a window's times and a warning).
func (e *evidenceFilter) pieceEvidence(s *corpus.Segment, d uint32, ff fileFacts, fs *corpus.File, id uint32) bool {
	f := e.f
	if ff.excluded {
		return false
	}
	if f.all {
		return true
	}
	if f.scopeEpisode && !ff.current {
		return false
	}
	if f.window.on {
		if fs == nil {
			fs = e.ix.state.File(id)
		}
		if !inWindow(fs, s.LineOf(d), f.window) {
			return false
		}
	}
	if !ff.conversational {
		return true // a note, or a foreign log's record read as one (spec §2)
	}
	if !f.records {
		return false
	}
	if ff.current {
		if s.FlagsOf(d)&corpus.FlagUnfielded != 0 {
			if fs == nil {
				fs = e.ix.state.File(id)
			}
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
