package fleet

// This file holds the fleet's search (spec §16 `runls search --fleet`): the
// request of §5 over the runs shipped, its statistics and candidates asked
// of the store, the pieces ranked by §6 with the index's arithmetic, what
// the rules hid and the notices of §12.

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"runls/retriever"
)

// Request is a search request over shipped runs: spec §5's, and the runs
// searched (none: every run).
type Request struct {
	retriever.Request
	Runs []string `json:"runs,omitempty"`
}

// Item is a piece found in the fleet: an item of spec §9 that names its run.
type Item struct {
	retriever.Item
	Run string `json:"run"`
}

// Result is the run/search result shape of spec §9, its items naming their runs.
type Result struct {
	Items   []Item             `json:"items"`
	Hidden  retriever.Hidden   `json:"hidden"`
	Notices []retriever.Notice `json:"notices"`
}

// The default bounds on the records a search ranks: fetching them is most
// of a search's time, and its cost is the store's blocks read to find
// them, not the records: the records of a rare term spread over every run
// are a block each, where the runs named hold few blocks (1,000 runs of 1
// MB, VictoriaLogs on 2 cores: 2,000 records over every run some 1 s, 200
// some 0.1 s; 2,000 of one run some 30 ms).
const (
	DefaultMaxCandidates   = 2000 // a search of the runs named
	DefaultFleetCandidates = 200  // a search of every run
)

// Searcher searches a store.
type Searcher struct {
	Store Store
	// MaxCandidates bounds the records ranked; 0: DefaultMaxCandidates
	// when the request names runs, DefaultFleetCandidates when not.
	MaxCandidates int
}

// Search answers a request (spec §16): statistics of the runs and agents
// searched before the filters, candidates by the query's terms, BM25 by
// runls, rules 1-4 of §5, given once, top K, hidden and notices.
func (s *Searcher) Search(ctx context.Context, req Request) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	for _, r := range req.Runs {
		if r == "" {
			return Result{}, &retriever.FieldError{Field: "run", Value: r, Reason: "want a run id"}
		}
	}
	terms, err := retriever.QueryTerms(req.RankingText())
	if err != nil {
		return Result{}, err
	}
	scope := Scope{Runs: req.Runs, Agent: req.Agent}
	rules := Rules{Episode: req.Episode, Conversation: req.Conversation, ScopeEpisode: req.Scope == "episode", AllConversations: req.AllConversations}
	bound := s.MaxCandidates
	switch {
	case bound > 0:
	case len(req.Runs) > 0:
		bound = DefaultMaxCandidates
	default:
		bound = DefaultFleetCandidates
	}
	// The statistics first, from the tallies: they say whether the
	// candidates can pass the bound (they are records holding a term, at
	// most the pieces that do).
	st, err := s.Store.Statistics(ctx, StatsQuery{Scope: scope, Terms: terms,
		Agent: req.Agent, Episode: req.Episode, Conversation: req.Conversation})
	if err != nil {
		return Result{}, err
	}
	res := Result{Items: []Item{}, Notices: []retriever.Notice{}}
	partial := []string{st.Partial}
	if res.Notices, err = s.notices(ctx, req, st); err != nil {
		return Result{}, err
	}
	var most int64 // candidates at most
	for _, d := range st.DF {
		most += d
	}
	if len(terms) > 0 && most > 0 {
		// Every candidate, when they are within the bound; past it, the
		// records holding the rarest terms, with the rules as the store's
		// filters (evidence) and without them (for what the rules hid).
		var lifted, evidence []Entry
		past := false
		var p0, p1, p2 string
		var err0, err1, err2 error
		var wg sync.WaitGroup
		if most <= int64(bound) {
			lifted, p0, err0 = s.Store.Candidates(ctx, CandidateQuery{Scope: holding(scope, st.ByRun, terms, terms), Terms: terms})
		} else {
			// The rarest terms (as many as the bound takes whole); when
			// they are every term and the records holding them are within
			// the bound after all (pieces outnumber records), those are
			// every candidate.
			rare, every := rarest(terms, st.DF, bound)
			scope := holding(scope, st.ByRun, terms, rare)
			wg.Go(func() {
				evidence, p1, err1 = s.Store.Candidates(ctx, CandidateQuery{Scope: scope, Terms: rare, Rules: rules, Filtered: true, Limit: bound})
			})
			wg.Go(func() {
				lifted, p2, err2 = s.Store.Candidates(ctx, CandidateQuery{Scope: scope, Terms: rare, Limit: bound + 1})
			})
			wg.Wait()
			if past = !every || len(lifted) > bound; past {
				lifted = lifted[:min(len(lifted), bound)]
			} else {
				evidence, p1 = nil, ""
			}
		}
		if err := cmp.Or(err0, err1, err2); err != nil {
			return Result{}, err
		}
		partial = append(partial, p0, p1, p2)
		liftedPieces := countPieces(lifted, terms)
		evidencePieces := liftedPieces
		df := st.DF
		if !past {
			// Every candidate: n(t) counted from their pieces, the folder's.
			df = pieceDF(liftedPieces, len(terms))
		} else {
			evidencePieces = countPieces(evidence, terms)
			res.Notices = append(res.Notices, retriever.Notice{Field: "candidates", Value: fmt.Sprint(most),
				Message: fmt.Sprintf("ranked %d of up to %d candidates: narrow by run, episode or time", len(evidence), most)})
		}
		sc := retriever.NewScorer(st.Pieces, st.Tokens, df)
		k := req.K()
		top := rank(evidencePieces, sc, &req, true, k)
		u := rank(liftedPieces, sc, &req, false, k)
		res.Hidden = hiddenOf(u, top, &req)
		for _, h := range top {
			res.Items = append(res.Items, itemOf(h, terms))
		}
	}
	for _, p := range partial {
		if p != "" {
			res.Notices = append(res.Notices, retriever.Notice{Field: "fleet", Value: "partial",
				Message: "the store answered for part of its data (a storage node is down): " + p})
			break
		}
	}
	return res, nil
}

// holding narrows a scope to the runs whose tallies hold one of the terms
// asked (of terms), where they are few: the store then reads their blocks
// only (a rare term's search read a bloom filter of every block of every
// run). Many runs are left as they were: a long list costs the store more
// than it saves.
func holding(scope Scope, byRun map[string][]int64, terms, asked []string) Scope {
	const most = 100
	if byRun == nil || len(scope.Runs) > 0 && len(scope.Runs) <= most {
		return scope
	}
	var runs []string
	for run, df := range byRun {
		for i, t := range terms {
			if df[i] > 0 && slices.Contains(asked, t) {
				runs = append(runs, run)
				break
			}
		}
		if len(runs) > most {
			return scope
		}
	}
	if len(runs) == 0 {
		return scope
	}
	slices.Sort(runs)
	scope.Runs = runs
	return scope
}

// rarest are the rarest terms (the highest idf: the likeliest to rank),
// as many of them as the bound takes whole, at least one; every says
// they are every term some piece holds.
func rarest(terms []string, df []int64, bound int) (rare []string, every bool) {
	order := make([]int, 0, len(terms))
	for i := range terms {
		if df[i] > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return df[order[a]] < df[order[b]] })
	var sum int64
	for _, i := range order {
		if len(rare) > 0 && sum+df[i] > int64(bound) {
			break
		}
		rare = append(rare, terms[i])
		sum += df[i]
	}
	return rare, len(rare) == len(order)
}

// counted are the pieces of entries with their query terms counted once.
type counted struct {
	e  *Entry
	p  retriever.ShipPiece
	tf []int
	dl int
}

// countPieces counts the query's terms in every piece of entries.
func countPieces(entries []Entry, terms []string) []counted {
	idx := make(map[string]int, len(terms))
	for i, t := range terms {
		idx[t] = i
	}
	var out []counted
	for i := range entries {
		e := &entries[i]
		for _, p := range e.Pieces {
			tf := make([]int, len(terms))
			dl := retriever.QueryTF(e.Text[p.TextStart:p.TextEnd], idx, tf)
			out = append(out, counted{e: e, p: p, tf: tf, dl: dl})
		}
	}
	return out
}

// pieceDF counts, for each term, the pieces that hold it: n(t) exactly,
// when the pieces are those of every record of the scope holding a term.
func pieceDF(pieces []counted, n int) []int64 {
	df := make([]int64, n)
	for _, c := range pieces {
		for j, f := range c.tf {
			if f > 0 {
				df[j]++
			}
		}
	}
	return df
}

// hit is a scored piece.
type hit struct {
	score float64
	e     *Entry
	p     retriever.ShipPiece
	text  string
}

// rank scores the pieces of entries, keeps those above zero that pass the
// rules (when rules) and are not the turn message's told records, best
// first with ties in location order, each text given once, at most k.
func rank(pieces []counted, sc *retriever.Scorer, req *Request, rules bool, k int) []hit {
	turn := strings.TrimSpace(req.TurnMessage)
	var hits []hit
	for _, c := range pieces {
		e := c.e
		// The turn message's told records, as the interpreter read them (a
		// transcript's user lines are told by their role, and the folder
		// does not compare those).
		if turn != "" && e.Reading == retriever.ReadingTold && e.RecordFile && strings.TrimSpace(e.Text) == turn {
			continue
		}
		if !req.InWindow(e.TimeText) || (rules && reason(req, e) != "") {
			continue
		}
		if score := sc.Score(c.tf, c.dl); score > 0 {
			hits = append(hits, hit{score: score, e: e, p: c.p, text: e.Text[c.p.TextStart:c.p.TextEnd]})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return compareLocation(a, b)
	})
	seen := map[string]bool{}
	out := hits[:0]
	for _, h := range hits {
		if len(out) == k {
			break
		}
		if seen[h.text] {
			continue
		}
		seen[h.text] = true
		out = append(out, h)
	}
	return out
}

// compareLocation is the location order (spec §3), runs first.
func compareLocation(a, b hit) int {
	return cmp.Or(
		strings.Compare(a.e.Run, b.e.Run),
		retriever.CompareEpisodes(a.e.Episode, b.e.Episode),
		strings.Compare(a.e.Path, b.e.Path),
		cmp.Compare(a.p.Line, b.p.Line),
		cmp.Compare(a.p.ByteStart, b.p.ByteStart),
	)
}

func reason(req *Request, e *Entry) string {
	return req.RuleReason(e.Episode, e.RecordFile, e.Unfielded, e.Conversation)
}

// hiddenOf counts the pieces of u (the ranking with rules 1-4 lifted) that
// the rules kept out of top and whose text top does not hold (spec §12).
func hiddenOf(u, top []hit, req *Request) retriever.Hidden {
	var out retriever.Hidden
	texts := map[string]bool{}
	for _, h := range top {
		texts[h.text] = true
	}
	for _, h := range u {
		if texts[h.text] {
			continue
		}
		switch reason(req, h.e) {
		case retriever.ReasonScope:
			out.Scope++
		case retriever.ReasonNoContext:
			out.NoContext++
		case retriever.ReasonUnfielded:
			out.Unfielded++
		case retriever.ReasonOtherConversation:
			out.OtherConversation++
		}
	}
	return out
}

// notices are spec §12's for the runs searched.
func (s *Searcher) notices(ctx context.Context, req Request, st Stats) ([]retriever.Notice, error) {
	out := []retriever.Notice{}
	if req.Agent != "" && !st.HasAgent {
		n := retriever.Notice{Field: "agent", Value: req.Agent, Message: "no run searched has an agent folder named " + req.Agent}
		agents, err := s.Store.Agents(ctx, req.Runs)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, a := range agents {
			if a != req.Agent && strings.EqualFold(a, req.Agent) {
				found = append(found, a)
			}
		}
		if len(found) > 0 {
			sug := slices.Min(found)
			n.Suggestion = &sug
			n.Message += " (" + sug + " differs only in case)"
		}
		out = append(out, n)
	}
	if req.Episode == "" {
		return out, nil
	}
	if !st.HasEpisode {
		return append(out, retriever.Notice{Field: "episode", Value: req.Episode, Message: "no run searched has a folder " + req.Episode}), nil
	}
	if c := req.Conversation; c != "" && c != "-" && !st.HasConversation {
		out = append(out, retriever.Notice{Field: "conversation", Value: c,
			Message: "no record of " + req.Episode + " was written in conversation " + c})
	}
	return out, nil
}

// itemOf makes a result item of a hit.
func itemOf(h hit, terms []string) Item {
	e := h.e
	it := Item{Run: e.Run, Item: retriever.Item{
		Location: retriever.Location{URI: URI(e.Run, e.Path), Range: retriever.Range{
			Start: retriever.Position{Line: int(h.p.Line), Character: h.p.CharStart},
			End:   retriever.Position{Line: int(h.p.Line), Character: h.p.CharEnd},
		}},
		Score: h.score, Text: h.text, Agent: e.Agent, Episode: e.Episode,
		Conversation: e.Conversation, Reading: e.Reading,
		Matches: retriever.MatchRanges(h.text, terms),
		Path:    e.Run + "/" + e.Path, File: e.Path, ByteStart: h.p.ByteStart, ByteEnd: h.p.ByteEnd,
	}}
	if e.Reading == "" {
		it.Reading = retriever.ReadingNote
	}
	if e.TimeText != "" {
		t := e.TimeText
		it.Time = &t
	}
	if e.Level != "" {
		l := e.Level
		it.Level = &l
	}
	return it
}

// URI names a file of a shipped run: runls-fleet:///RUN/PATH.
func URI(run, path string) string {
	u := url.URL{Scheme: "runls-fleet", Path: "/" + run + "/" + path}
	return u.String()
}
