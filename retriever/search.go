package retriever

// This file holds the search entry points (Search, Symbols), the answer kept
// fresh beside the watcher's barrier, and rank, which scores a query over one
// committed state.

import (
	"context"
	"strings"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
	"runls/retriever/internal/runfs"
)

// Search refreshes, then answers a request (spec §5, §6).
func (ix *Index) Search(ctx context.Context, req Request) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	return ix.fresh(ctx, func() (Result, error) { return ix.searchIndexed(ctx, req) })
}

// fresh returns answer's result after the index was brought up to date with
// every change made before the call (Refresh). With a healthy watcher, the
// answer is made while the barrier's event is on its way (askEvents, then
// the answer, then await): when the update after the barrier then commits
// nothing, the index the answer read is the index after the update, so its
// result is the one to return; otherwise the answer is made again. The answer
// runs on the caller's goroutine: handing it to another one cost more (a
// goroutine woken on the other core, then this one woken again) than the
// barrier's wait it was to hide.
//
// The answer reads the segments, the dictionary and the statistics, which
// may be mapped: a fault on them (internal/persist/fault.go) drops the cache entry, and the
// request is answered again from the run indexed afresh.
func (ix *Index) fresh(ctx context.Context, answer func() (Result, error)) (Result, error) {
	guardedAnswer := ix.guardedAnswer(answer)
	res, err := ix.freshOnce(ctx, guardedAnswer)
	if persist.IsFault(err) {
		ix.cache.DropMapping(err)
		res, err = ix.freshOnce(ctx, guardedAnswer)
	}
	return res, err
}

// viewed makes a view of the committed file states (records, outlines,
// diagnostics, failures, conversations, read-backs) under the cache's
// guard: a restored file's columns are checked as a view first reads them
// (internal/persist/inplace.go), and when some were found bad (or a read
// of the entry's mapping faulted) the entry is dropped, the run indexed
// afresh, and the view made again from that index.
func viewed[T any](ctx context.Context, ix *Index, where string, view func() (T, error)) (T, error) {
	g := ix.cache.Guard()
	ix.cache.Inject("view")
	res, err := persist.Call(g, where, view)
	if persist.IsFault(err) {
		ix.cache.DropMapping(err)
		if _, err := ix.Refresh(ctx, nil); err != nil {
			var zero T
			return zero, err
		}
		res, err = persist.Call(g, where, view)
	}
	return res, err
}

// A search's mappings are checked once a request, before its first read of
// them: by Refresh's update without a barrier, here with one (on the quiet
// path too). A record request's quiet path (freshIfWatched: documentSymbol,
// hover) checks none: safe, since its view is made under viewed's guard,
// which turns a fault on a mapping into a dropped entry and the view made
// again from the run indexed afresh.
//
// When nothing changed since the last update (runfs.Events.Quiet: the
// watcher's change probe got no event since a search last drained it,
// and nothing is polled, pending or being updated), the committed state
// already holds every change made before the call: the answer is made from
// it, with no barrier and no update (issue 33: some 35-65 µs of a cheap
// search's wall time, most of it the watcher's goroutines woken). An
// update that commits while that answer is made (a cache entry dropped
// and the run indexed afresh, or a change made since the call) sends the
// request the barrier's way.
func (ix *Index) freshOnce(ctx context.Context, answer func() (Result, error)) (Result, error) {
	b := ix.fw.CurrentBarrier()
	if b == nil {
		if _, err := ix.Refresh(ctx, nil); err != nil {
			return Result{}, err
		}
		return answer()
	}
	ix.cache.CheckMapping("")
	before := ix.state.Commits.Load()
	if ix.indexed.Load() && ix.fw.Quiet(b) {
		if h := ix.fw.beforeQuiet; h != nil {
			h()
		}
		res, err := answer()
		if persist.IsFault(err) {
			return Result{}, err // fresh drops the entry and asks again
		}
		if err == nil && ix.state.Commits.Load() == before {
			ix.fw.quietAnswers.Add(1)
			return res, nil
		}
	}
	return ix.freshBarrier(ctx, b, answer)
}

// freshBarrier is freshOnce's way through the barrier: the answer is made
// while the barrier's event is on its way, and again when the update after
// it committed something. Its pass drains the change probe first, and tells
// it whether the update returned (runfs.Probe: what a pass drained is
// committed once it ends well).
func (ix *Index) freshBarrier(ctx context.Context, b *runfs.Barrier, answer func() (Result, error)) (Result, error) {
	pass, passed := ix.fw.BeginPass(), false
	defer func() { pass.End(passed) }()
	before := ix.state.Commits.Load()
	asked := ix.fw.askEvents(b, ix.log)
	res, aerr := answer()
	if persist.IsFault(aerr) {
		return Result{}, aerr // fresh drops the entry and asks again
	}
	if err := asked.await(ctx); err != nil {
		return Result{}, err
	}
	if _, err := ix.updateChecked(ctx, nil); err != nil {
		return Result{}, err
	}
	passed = true
	if aerr == nil && ix.state.Commits.Load() == before {
		return res, nil
	}
	return answer()
}

// newFilter makes the evidence rules of a valid request, from the committed
// state's conversation ids and text hash seed and the interpreter.
func newFilter(st *corpus.State, in *Interpreter, req Request) *filter {
	f := &filter{scopeEpisode: req.Scope == "episode", records: req.Episode != "" && req.Conversation != ""}
	if req.Episode != "" {
		f.episode, _ = EpisodeNumber(req.Episode)
	}
	if f.records {
		f.conv, f.hasConv = st.Convs.Lookup(req.Conversation)
		f.dash, _ = st.Convs.Lookup("-")
		f.allConvs = req.AllConversations
	}
	f.window, _ = parseTimeWindow(req.From, req.To) // checked by Validate
	if in != nil && req.TurnMessage != "" {
		f.turnHash, f.hasTurn = corpus.TextHashString(st.Seed, strings.TrimSpace(req.TurnMessage)), true
	}
	return f
}

// rank answers a query from one committed state: its statistics, postings and
// files are read under one read lock, so no update is seen in part. The
// pieces' text is read from the files after the lock is released.
func (ix *Index) rank(ctx context.Context, text, agent string, k int, f *filter) (Result, error) {
	hits, agents, err := ix.rankLocked(text, agent, k, ix.rankConfirmed(ctx, f))
	if err != nil {
		return Result{}, err
	}
	return ix.items(hits, agents), nil
}

// rankLocked is the one ranking under the read lock, released by a defer (a
// fault on a mapped segment must not leave it held, fault.go): the query of
// text for agent, k hits, run by pick (which reads what else it needs of the
// same state), and the hits' agents.
func (ix *Index) rankLocked(text, agent string, k int, pick func(bm25.Query) ([]hit, error)) ([]hit, []string, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	q, err := newQuery(&ix.state, text, agent)
	if err != nil {
		return nil, nil, err
	}
	q.K = k
	hits, err := pick(q)
	if err != nil {
		return nil, nil, err
	}
	return hits, hitAgents(&ix.state, hits), nil
}

// Symbols ranks query against every indexed piece of every agent and episode
// with no episode or conversation filter (spec §9 workspace/symbol); at most
// limit items (0: DefaultSymbolLimit).
func (ix *Index) Symbols(ctx context.Context, query string, limit int) (Result, error) {
	if limit <= 0 {
		limit = DefaultSymbolLimit
	}
	return ix.fresh(ctx, func() (Result, error) { return ix.rank(ctx, query, "", limit, &filter{all: true}) })
}
