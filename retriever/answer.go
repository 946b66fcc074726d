package retriever

// What a search answers besides its ranked pieces (spec §9 run/search, §12):
// what rules 1-4 of §5 hid of the pieces the request would otherwise have
// returned, the request's values that the run does not hold, and where the
// query's terms are in each piece's text.

import (
	"context"
	"slices"
	"strings"
	"sync"

	"runls/retriever/internal/bm25"
)

// searchIndexed answers a valid request from what is indexed now: it ranks
// it (spec §5, §6) and says what its filters hid and which of its values the
// run does not hold (§12). Both rankings read one committed state under one
// read lock.
//
// The lifted ranking U (the request with rules 1-4 lifted) is made first:
// when every piece of U passes the rules, U is the result itself (a piece
// that passes ranks in the result no lower than in U, and every piece above
// it in the result is above it in U), so one ranking answers both; else the
// request is ranked again with its rules.
func (ix *Index) searchIndexed(ctx context.Context, req Request) (Result, error) {
	f := ix.newFilter(req)
	text := req.rankingText()
	hits, agents, hidden, notices, err := ix.rankAnswer(ctx, req, text, f)
	if err != nil {
		return Result{}, err
	}
	res := ix.items(hits, agents)
	res.Hidden, res.Notices = hidden, notices
	terms := map[string]bool{}
	for _, t := range bm25.Terms(text) {
		terms[t] = true
	}
	for i := range res.Items {
		res.Items[i].Matches = matchRanges(res.Items[i].Text, terms)
	}
	return res, nil
}

// rankAnswer ranks the request (rankLocked): under the same read lock, the
// ranking with the evidence rules lifted, the one with them when it differs,
// what they hid and the notices.
func (ix *Index) rankAnswer(ctx context.Context, req Request, text string, f *filter) (hits []hit, agents []string, hidden Hidden, notices []Notice, err error) {
	hits, agents, err = ix.rankLocked(text, req.Agent, req.topK(), func(q bm25.Query) ([]hit, error) {
		ix.warnUnfielded(f, req.Agent)
		if !f.scopeEpisode || f.episode != "" {
			q.Memo = &bm25.Memo{} // what the lifted ranking scores, the request's own may reuse
		}
		lifted, err := ix.run(ctx, q, liftedFilter(f))
		hits := lifted
		switch {
		case err != nil:
			return nil, err
		case f.scopeEpisode && f.episode == "":
			hits = nil // rule 1: nothing without a current episode
		case ix.allEvidence(lifted, f):
		default:
			if hits, err = ix.run(ctx, q, f); err != nil {
				return nil, err
			}
		}
		hidden, notices = ix.hiddenOf(lifted, hits, f), ix.notices(req)
		return hits, nil
	})
	if err != nil {
		return nil, nil, Hidden{}, nil, err
	}
	return hits, agents, hidden, notices, nil
}

// hitAgents names each hit's agent. The caller holds the read lock.
func (c *committed) hitAgents(hits []hit) []string {
	agents := make([]string, len(hits))
	for i, h := range hits {
		agents[i] = c.agents[h.fs.agent]
	}
	return agents
}

// liftedFilter is f with rules 1-4 of spec §5 lifted: every indexed piece of
// the agents searched, but for the records of being told the turn message,
// which stay out (§12).
func liftedFilter(f *filter) *filter {
	return &filter{records: true, turnHash: f.turnHash, hasTurn: f.hasTurn, window: f.window}
}

// allEvidence reports whether every hit passes f's rules.
func (c *committed) allEvidence(hits []hit, f *filter) bool {
	for _, h := range hits {
		if c.pieceReason(f, h) != "" {
			return false
		}
	}
	return true
}

// hiddenOf counts the hits of the lifted ranking that f's rules kept out and
// whose text the result does not hold, by the first reason that applies.
func (c *committed) hiddenOf(lifted, result []hit, f *filter) Hidden {
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
		switch c.pieceReason(f, h) {
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
func (c *committed) pieceReason(f *filter, h hit) string {
	current := f.episode != "" && h.fs.epNum == f.episode
	return ruleReason(f, current, h.fs.conversational(), h.seg.flags[h.doc]&flagUnfielded != 0, h.seg.convOf(h.doc))
}

// ruleReason is the first of rules 1-4 of spec §5 that keeps out a piece
// (or a record) of a file of the current episode or not, of a record file or
// not, unfielded or of conversation conv, in the order of §11's hover; ""
// when none does. The search applies the same rules in Index.evidence.
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
func (c *committed) notices(req Request) []Notice {
	out := []Notice{}
	if req.Agent != "" && !c.hasAgent(req.Agent) {
		n := Notice{Field: "agent", Value: req.Agent, Message: "the run has no agent folder named " + req.Agent}
		if s, ok := c.agentInOtherCase(req.Agent); ok {
			n.Suggestion = &s
			n.Message += " (" + s + " differs only in case)"
		}
		out = append(out, n)
	}
	if req.Episode == "" {
		return out
	}
	num, _ := EpisodeNumber(req.Episode)
	if !c.hasEpisode(num) {
		return append(out, Notice{Field: "episode", Value: req.Episode, Message: "the run has no folder " + req.Episode})
	}
	if conv := req.Conversation; conv != "" && conv != "-" && !c.conversationIn(conv, num) {
		out = append(out, Notice{Field: "conversation", Value: conv,
			Message: "no record of " + req.Episode + " was written in conversation " + conv})
	}
	return out
}

// hasAgent reports whether a file of the run lies in an agent folder of
// that name. It stops at the first such file.
func (c *committed) hasAgent(name string) bool {
	id, ok := c.agentIDs[name]
	if !ok {
		return false
	}
	return c.facts.of(c.commits.Load(), fact{kind: factAgent, name: name}, func() bool {
		for _, fs := range c.files {
			if fs.agent == id {
				return true
			}
		}
		return false
	})
}

// agentInOtherCase returns the first, byte-wise, of the run's agents whose
// name differs from name only in case.
func (c *committed) agentInOtherCase(name string) (string, bool) {
	var found []string
	for _, a := range c.agents {
		if a != name && strings.EqualFold(a, name) && c.hasAgent(a) {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		return "", false
	}
	return slices.Min(found), true
}

// hasEpisode reports whether the run has an episode folder of number num
// (EpisodeNumber: episode-07 is episode-7).
func (c *committed) hasEpisode(num string) bool {
	for name := range c.episodes {
		if n, _ := EpisodeNumber(name); n == num {
			return true
		}
	}
	return false
}

// conversationIn reports whether a record of episode num (any agent, any
// level) was written in conversation name. It stops at the first file that
// has one.
func (c *committed) conversationIn(name, num string) bool {
	id, ok := c.convs.Lookup(name)
	if !ok {
		return false
	}
	return c.facts.of(c.commits.Load(), fact{kind: factConversation, name: name, episode: num}, func() bool {
		for _, fs := range c.files {
			if fs.epNum == num {
				if _, found := slices.BinarySearch(fs.convs, id); found {
					return true
				}
			}
		}
		return false
	})
}

// factMemo keeps what hasAgent and conversationIn found, for one committed
// state. Each looks at every file of the run until it finds one (at 100,000
// files, a conversation's search took some 0.2 ms of a rare word's 0.3), and
// its answer depends on the committed files alone: they change only in
// commit, which counts in ix.commits under the write lock, and a committed
// fileState is never written. So an answer holds while ix.commits is the
// same, and the callers, holding the read lock, see no commit come.
type factMemo struct {
	mu      sync.Mutex
	commits uint64
	known   map[fact]bool
}

type fact struct {
	kind          factKind
	name, episode string
}

type factKind uint8

const (
	factAgent factKind = iota
	factConversation
	factUnfielded // the files of an episode were looked at for warnUnfielded
)

// maxFacts bounds the facts kept for one state (requests can name any
// number of agents and conversations).
const maxFacts = 1024

// of returns the fact's answer for the committed state, from find when it is
// not known yet. Under ix.mu's read lock.
func (m *factMemo) of(commits uint64, f fact, find func() bool) bool {
	m.mu.Lock()
	v, ok := m.known[f]
	ok = ok && m.commits == commits
	m.mu.Unlock()
	if ok {
		return v
	}
	v = find()
	m.mu.Lock()
	if m.commits != commits || len(m.known) >= maxFacts {
		m.commits, m.known = commits, map[fact]bool{}
	}
	if m.known == nil {
		m.known = map[fact]bool{}
	}
	m.known[f] = v
	m.mu.Unlock()
	return v
}
