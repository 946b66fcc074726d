package lsp

// This file holds the goroutines that answer requests: kept between
// requests, so that a request does not start on a new goroutine's small
// stack and grow it (a search's calls go deep: each growth copies the
// stack) and so that starting one is a hand-over, not a goroutine made.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// maxIdleWorkers is how many workers wait for a request at most: an
// editor's requests come a few at once at most, and a request that finds
// none idle gets a new one (requests are never queued). More than one:
// the worker that answered a request is still ending it when the client,
// answered, sends the next.
const maxIdleWorkers = 4

// workerIdleFor is how long a worker waits for a request before it ends:
// a burst of requests (an editor's as the user types) keeps them, a quiet
// server holds none.
const workerIdleFor = time.Second

// workers runs funcs on goroutines kept idle between them until ctx ends.
type workers struct {
	ctx  context.Context
	work chan func()
	idle atomic.Int32
	wg   sync.WaitGroup // every worker, idle or not
	made atomic.Int64   // workers started (the tests')
}

func newWorkers(ctx context.Context) *workers {
	return &workers{ctx: ctx, work: make(chan func())}
}

// do runs f on an idle worker, or on a new one when none is idle.
func (w *workers) do(f func()) {
	select {
	case w.work <- f:
	default:
		w.wg.Add(1)
		w.made.Add(1)
		go w.loop(f)
	}
}

// loop runs f, then whatever it is handed, until ctx ends, enough workers
// are idle, or none was handed for workerIdleFor.
func (w *workers) loop(f func()) {
	defer w.wg.Done()
	var quiet *time.Timer
	for {
		f()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		f = nil // an idle worker keeps nothing of the request it answered
		if quiet == nil {
			quiet = time.NewTimer(workerIdleFor)
		} else {
			quiet.Reset(workerIdleFor)
		}
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-quiet.C:
			w.idle.Add(-1)
			return
		case <-w.ctx.Done():
			w.idle.Add(-1)
			quiet.Stop()
			return
		}
	}
}

// wait waits for every worker to end (after ctx has ended).
func (w *workers) wait() { w.wg.Wait() }
