package retriever

// What a search answers besides its ranked pieces (spec §9 run/search, §12):
// what rules 1-4 of §5 hid of the pieces the request would otherwise have
// returned, the request's values that the run does not hold, and where the
// query's terms are in each piece's text.

import (
	"context"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// searchIndexed answers a valid request from what is indexed now: it ranks
// it (spec §5, §6) and says what its filters hid and which of its values the
// run does not hold (§12). Both rankings read one committed state under one
// read lock.
//
// The lifted ranking U (the request with rules 1-4 lifted) and the
// request's own are made in one walk of the lists (runNested): the engine
// keeps both heaps, pruning by the lower threshold, and asks the request's
// rules only of pieces that U's filter accepted and that would enter the
// request's heap (rules 1-4 only narrow U's filter).
func (ix *Index) searchIndexed(ctx context.Context, req Request) (Result, error) {
	return ix.searchFiltered(ctx, req, newFilter(&ix.state, ix.interpreter, req))
}

// searchFiltered is searchIndexed with the request's filter f made.
func (ix *Index) searchFiltered(ctx context.Context, req Request, f *filter) (Result, error) {
	text := req.rankingText()
	hits, agents, hidden, notices, err := ix.rankAnswer(ctx, req, text, f)
	if err != nil {
		return Result{}, err
	}
	res := ix.items(hits, agents)
	res.Hidden, res.Notices = hidden, notices
	setMatches(res.Items, text)
	return res, nil
}

// rankAnswer ranks the request (rankLocked): under the same read lock, the
// ranking with the evidence rules lifted, the one with them when it differs,
// what they hid and the notices.
func (ix *Index) rankAnswer(ctx context.Context, req Request, text string, f *filter) (hits []hit, agents []string, hidden Hidden, notices []Notice, err error) {
	hits, agents, err = ix.rankLocked(text, req.Agent, req.topK(), func(q bm25.Query) ([]hit, error) {
		ix.warnUnfielded(f, req.Agent)
		return ix.confirmedHits(f, func() ([]hit, error) {
			var lifted, hits []hit
			var err error
			if f.scopeEpisode && f.episode == "" {
				// rule 1: nothing without a current episode
				lifted, err = ix.run(ctx, q, liftedFilter(f))
			} else {
				lifted, hits, err = ix.runNested(ctx, q, liftedFilter(f), f)
			}
			if err != nil {
				return nil, err
			}
			hidden, notices = hiddenOf(&ix.state, lifted, hits, f), noticesOf(&ix.state, req)
			return hits, nil
		})
	})
	if err != nil {
		return nil, nil, Hidden{}, nil, err
	}
	return hits, agents, hidden, notices, nil
}

// hitAgents names each hit's agent. The caller holds the read lock.
func hitAgents(c *corpus.State, hits []hit) []string {
	agents := make([]string, len(hits))
	for i, h := range hits {
		agents[i] = c.Agents[h.fs.Agent]
	}
	return agents
}

// liftedFilter is f with rules 1-4 of spec §5 lifted: every indexed piece of
// the agents searched, but for the records of being told the turn message,
// which stay out (§12).
func liftedFilter(f *filter) *filter {
	return &filter{records: true, turnHash: f.turnHash, hasTurn: f.hasTurn, window: f.window, exclude: f.exclude}
}

// hiddenOf counts the hits of the lifted ranking that f's rules kept out and
// whose text the result does not hold, by the first reason that applies.
func hiddenOf(c *corpus.State, lifted, result []hit, f *filter) Hidden {
	var out Hidden
	if len(lifted) == 0 {
		return out
	}
	texts := make(map[uint64]bool, len(result))
	for _, h := range result {
		texts[h.seg.Key(h.doc)] = true
	}
	for _, h := range lifted {
		if texts[h.seg.Key(h.doc)] {
			continue
		}
		switch pieceReason(c, f, h) {
		case ReasonScope:
			out.Scope++
		case ReasonNoContext:
			out.NoContext++
		case ReasonUnfielded:
			out.Unfielded++
		case ReasonOtherConversation:
			out.OtherConversation++
		}
	}
	return out
}

// pieceReason is why rules 1-4 of spec §5 keep a hit's piece out of f's
// result, or "" when they let it in.
func pieceReason(c *corpus.State, f *filter, h hit) string {
	current := f.episode != "" && h.fs.EpNum() == f.episode
	return ruleReason(f, current, h.fs.Conversational(), h.seg.FlagsOf(h.doc)&corpus.FlagUnfielded != 0, h.seg.ConvOf(h.doc))
}

// ruleReason is the first of rules 1-4 of spec §5 that keeps out a piece
// (or a record) of a file of the current episode or not, of a record file or
// not, unfielded or of conversation conv, in the order of §11's hover; ""
// when none does. The search applies the same rules in evidenceFilter.evidence.
func ruleReason(f *filter, current, record, unfielded bool, conv uint32) string {
	switch {
	case f.scopeEpisode && !current:
		return ReasonScope
	case !record:
		return ""
	case !f.records:
		return ReasonNoContext
	case current && unfielded:
		return ReasonUnfielded
	case current && !f.allConvs && !(f.hasConv && conv == f.conv) && conv != f.dash:
		return ReasonOtherConversation
	}
	return ""
}

// notices are the request's values that the run does not hold (spec §12):
// an agent with no agent folder of that name (with the agent whose name
// differs only in case, if any), an episode with no such folder, and a
// conversation that no record of the current episode was written in, when
// that episode exists. An agent folder counts when it holds a file, as
// run/info counts it. The caller holds the read lock.
func noticesOf(c *corpus.State, req Request) []Notice {
	out := []Notice{}
	if req.Agent != "" && !c.HasAgent(req.Agent) {
		n := Notice{Field: "agent", Value: req.Agent, Message: "the run has no agent folder named " + req.Agent}
		if s, ok := c.AgentInOtherCase(req.Agent); ok {
			n.Suggestion = &s
			n.Message += " (" + s + " differs only in case)"
		}
		out = append(out, n)
	}
	if req.Episode == "" {
		return out
	}
	num, _ := EpisodeNumber(req.Episode)
	if !c.HasEpisode(num, EpisodeNumber) {
		return append(out, Notice{Field: "episode", Value: req.Episode, Message: "the run has no folder " + req.Episode})
	}
	if conv := req.Conversation; conv != "" && conv != "-" && !c.ConversationIn(conv, num) {
		out = append(out, Notice{Field: "conversation", Value: conv,
			Message: "no record of " + req.Episode + " was written in conversation " + conv})
	}
	return out
}
