package retriever

// This file holds the answers made while the run's first index is built
// (spec §12, issue 33): a search that cannot wait answers from the batches
// committed so far, and says so with a notice whose value is the share of
// the run's bytes indexed. A partial answer is never given without it.
//
// A reopen's first update (spec §15) starts from the states its cache entry
// kept, which the walk then confirms file by file. A partial answer made
// before that is made from them, and the files its pieces are of are
// confirmed first (confirm.go): a file changed since it was indexed is left
// out, never shown stale, until the update has read it again.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"runls/retriever/internal/persist"
)

// IndexingField is the field of the notice that marks a partial answer.
const IndexingField = "indexing"

// PartialGrace is how long runls serve's run/search (and runls search
// --partial) waits for the run's first index before it answers from what
// is indexed so far: a large run's first index takes minutes, and an answer
// that says it is partial is worth more than that wait. A small run is
// indexed within it and answered completely: the sample run, which the
// editors' end-to-end tests search right after opening it, is indexed and
// searched by a whole `runls search --no-cache` in 0.01-0.09 s at a load
// of 15.
const PartialGrace = 500 * time.Millisecond

// ReopenGrace is PartialGrace for an index restored from its cache entry:
// there the answer made before the walk has confirmed every file is the
// entry's, each of its files checked (confirm.go), so it need not wait for
// the walk of a large run (some 0.3-0.7 s at 100,000 files; issue 33's
// target is a first answer within 0.3 s of a reopen), while a run of up to
// some thousands of files is walked within it and answered whole (800
// files: a few ms).
const ReopenGrace = 50 * time.Millisecond

// noGraceFiles is the restored files from which a reopen's answer waits
// for no walk at all: the walk gives each file a stat, some 2.5 µs of wall
// time a file over two cores (100,000 files: 0.25 s on a quiet machine), so
// a run of as many never ends it within ReopenGrace.
const noGraceFiles = 20_000

// GraceOf is how long a caller of eng (an engine of lsp's or mcpserver's,
// a fake in their tests) waits for its first index before a partial
// answer: eng's own AnswerGrace when it has one (an Index), else
// PartialGrace.
func GraceOf(eng any) time.Duration {
	if g, ok := eng.(interface{ AnswerGrace() time.Duration }); ok {
		return g.AnswerGrace()
	}
	return PartialGrace
}

// AnswerGrace is how long a search made while the first index is built
// waits for it before it answers partially: ReopenGrace when the index was
// restored from its cache entry (none when the entry holds noGraceFiles
// files or more), else PartialGrace.
func (ix *Index) AnswerGrace() time.Duration {
	switch {
	case !ix.restored.Load():
		return PartialGrace
	case ix.restoredFiles >= noGraceFiles:
		return 0
	}
	return ReopenGrace
}

// SearchPartial answers a request at once. While another call (Refresh, or
// a Search) builds the run's first index, the answer is made from what is
// committed so far and carries the indexing notice (spec §12); otherwise it
// is Search's, complete. The share in the notice is a lower bound: it is
// taken before the answer is made.
func (ix *Index) SearchPartial(ctx context.Context, req Request) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	return ix.partial(ctx,
		func() (Result, error) { return ix.searchIndexedConfirmed(ctx, req) },
		func() (Result, error) { return ix.Search(ctx, req) })
}

// SymbolsPartial is Symbols answered at once, as SearchPartial answers a
// search: while another call builds the run's first index, the symbols of
// what is committed so far, with the indexing notice in the result's
// Notices (workspace/symbol has no place for it: the server marks each
// symbol); otherwise Symbols' answer, complete.
func (ix *Index) SymbolsPartial(ctx context.Context, query string, limit int) (Result, error) {
	if limit <= 0 {
		limit = DefaultSymbolLimit
	}
	return ix.partial(ctx,
		func() (Result, error) { return ix.rank(ctx, query, "", limit, confirming(&filter{all: true})) },
		func() (Result, error) { return ix.Symbols(ctx, query, limit) })
}

// partial answers from what is indexed now, with the indexing notice,
// while the first index is built; complete otherwise, and after a fault on
// a mapping (fault.go) or any other error of the partial answer (complete
// makes the update Search makes), such as an answer whose files could not
// be confirmed (errUnconfirmed).
func (ix *Index) partial(ctx context.Context, indexed, complete func() (Result, error)) (Result, error) {
	building, err := ix.awaitFirstPlan(ctx)
	if err != nil {
		return Result{}, err
	}
	if !building {
		return complete()
	}
	notice := ix.indexingNotice()
	ix.cache.CheckMapping("")
	res, err := ix.guardedAnswer(indexed)()
	if err != nil {
		return complete()
	}
	res.Notices = append(slices.DeleteFunc(res.Notices, unjudged), notice)
	return res, nil
}

// unjudged reports whether a notice cannot be judged from part of the run:
// a conversation notice says no record of the episode was written in it,
// and the episode's records may not be indexed yet. (Agent and episode
// notices are of the folders, which the first update's scan has found.)
func unjudged(n Notice) bool {
	return n.Field == "conversation"
}

// buildingFirst reports whether the run's first index is being built now:
// no update has finished, and one holds the update lock.
func (ix *Index) buildingFirst() bool {
	if ix.indexed.Load() {
		return false
	}
	if ix.refreshMu.TryLock() {
		ix.refreshMu.Unlock()
		return false
	}
	return true
}

// awaitFirstPlan reports whether the first index is being built, after
// waiting for its scan to have found the run's bytes (the notice's
// denominator): a scan of many files takes a moment. A reopen does not
// wait for it: its entry's files are the run's as far as the index knows
// until the walk has confirmed them. Nor does a reopen's answer, made
// before its first update has begun, go the complete way at once: each
// caller starts that update beside it (the server, runls search
// --partial, the MCP server), so it waits up to updateStartWait for it to
// begin.
func (ix *Index) awaitFirstPlan(ctx context.Context) (bool, error) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	start := time.Now()
	for {
		building := ix.buildingFirst()
		switch {
		case building && (ix.restored.Load() || ix.first.runBytesKnown()):
			return true, nil
		case !building && (ix.indexed.Load() || !ix.restored.Load() || time.Since(start) > updateStartWait):
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// updateStartWait is how long a reopen's partial answer waits for the
// first update, started beside it, to begin (a goroutine's start: well
// under a millisecond unless the machine is loaded).
const updateStartWait = 100 * time.Millisecond

// indexingNotice is the notice of an answer made from what is indexed now:
// the share of the run's bytes indexed, rounded down, and never 100% while
// the first index is not done. Before a reopen's walk has found the run's
// bytes, the bytes its entry kept stand for them (the share is then 99%),
// and the message says that files changed or added since are left out.
func (ix *Index) indexingNotice() Notice {
	ix.mu.RLock()
	var done int64
	for _, fs := range ix.state.Files {
		if fs.Indexed() {
			done += fs.ReadPos
		}
	}
	ix.mu.RUnlock()
	pct := int64(0)
	total, known := ix.first.runBytes(), ix.first.runBytesKnown()
	reopening := !known && ix.restored.Load()
	if reopening {
		total = done
	}
	if total > 0 {
		pct = min(done*100/total, 99)
	}
	share := fmt.Sprintf("%d%%", pct)
	if reopening {
		return Notice{Field: IndexingField, Value: share,
			Message: "the run is being reopened: this answer is partial, made from the index its cache entry kept, with each of its files checked; files changed or added since the entry was written are left out until they are read again"}
	}
	return Notice{Field: IndexingField, Value: share,
		Message: fmt.Sprintf("the run is still being indexed: this answer is partial, made from the %s of the run's bytes indexed so far", share)}
}

// guardedAnswer is answer run under the cache's guard, as fresh runs it.
func (ix *Index) guardedAnswer(answer func() (Result, error)) func() (Result, error) {
	return func() (Result, error) {
		ix.cache.Inject("answer")
		return persist.Call(ix.cache.Guard(), "answering", answer)
	}
}

// firstIndex is what partial answers know of the first update: the run's
// bytes its scan found, and a test's hold on its batches.
type firstIndex struct {
	mu    sync.Mutex
	bytes int64 // the run's bytes, once the first update's scan is planned
	known bool

	// hold, when set (tests, and the runls_holdindex build), is called by a
	// worker before it commits a batch, with the update's context: it may
	// block, holding the first index part-built.
	hold func(ctx context.Context)
}

// planned records the run's bytes the first update's scan found.
func (f *firstIndex) planned(runBytes int64) {
	f.mu.Lock()
	f.bytes, f.known = runBytes, true
	f.mu.Unlock()
}

func (f *firstIndex) runBytesKnown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known
}

func (f *firstIndex) runBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bytes
}

// holdInject, set by the runls_holdindex build only (hold_inject.go), holds
// a first index part-built for the end-to-end tests of the real binary.
var holdInject func(ix *Index)
