package lsp

// This file holds the requests jsonrpc2's loop answers itself (issue 33):
// run/search and workspace/symbol once the first index has ended. Handed to
// a worker (serveAsync), a cheap search paid for the runtime's wake-up of
// another thread, and often ran on the other CPU, whose caches were not its
// own: 15–40 µs of a 0.3 ms answer through `runls serve` on the 1 GB run
// (bench/README.md). Answered on the loop, nothing else is read while it is
// made; so one that takes longer than inlineBudget has the messages that
// follow read beside it (stream.readAside), each handled as the loop would
// have, in the order they came: a $/cancelRequest acts at once, a request
// goes to a worker, a notification is handled before the next message. A
// response to the server's own request is kept for the loop, which alone
// routes it.
//
// Only once the first index has ended: before, a search may wait for it
// (the answer grace, partial.go), and the wait would hold up the loop.

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// inlineBudget is how long the loop answers a request before the messages
// that follow are read beside it: far above a cheap search (0.1–0.4 ms), so
// that one never starts a reader, and short enough that a cancel or the
// next request is not held up noticeably by a slow one.
const inlineBudget = 2 * time.Millisecond

// answersInline reports whether the loop answers a request of method
// itself: a search, once the engine's first index has ended.
func (s *server) answersInline(method string) bool {
	if s.stream == nil || (method != MethodRunSearch && method != protocol.MethodWorkspaceSymbol) {
		return false
	}
	s.mu.Lock()
	g := s.gen
	s.mu.Unlock()
	return g != nil && g.engine != nil && g.isReady()
}

// serveInline answers a request on the calling goroutine (jsonrpc2's
// loop), cancellable by its id as one answered on a worker is; after
// inlineBudget, the messages that follow are read and handled beside it
// until it is answered (its reply written: a client that does not read
// while it writes cannot hold both sides up).
func (s *server) serveInline(call *jsonrpc2.Call, reply jsonrpc2.Replier, h jsonrpc2.Handler) {
	a, ctx := s.beginCall(call, reply)
	if a == nil {
		return // the connection is ending: the client gets no answer now
	}
	defer s.endCall(a)
	s.inline.begin(s)
	defer s.inline.end()
	s.invoke(ctx, &a.reply, call, h, true)
}

// inlineCall is the server's request answered on the loop, if one is: one
// at a time, so that its timer is made once, not once a request (two
// allocations of a cheap search's 29).
//
// The timer is set by the first request that finds it unset, and left set
// when its request ends: setting it woke another thread to wait for the
// new deadline (the runtime's netpoller), some 5-10% of a cheap search
// through the server on the 1 GB run (bench/README.md). When it fires
// while a request younger than the budget is being answered, it is set
// again for that request's rest; with none, it stays unset until the next
// request. So a stream of cheap searches sets it once a budget at most.
type inlineCall struct {
	timer   atomic.Pointer[time.Timer]
	armed   atomic.Bool   // the timer is set (or its callback about to decide)
	running atomic.Uint64 // the number of the request being answered, 0: none
	began   atomic.Int64  // when it began, since epoch; stored before running
	count   uint64        // requests answered so far; the loop's own
	readers sync.WaitGroup
	// epoch is the first begin's time, with its monotonic clock: began
	// counts from it, so that a step of the wall clock moves no budget.
	// Set before the timer is made, never after.
	epoch time.Time
	// aside, when set, stands in for the read aside (a test's).
	aside func(n uint64)
	// budget is inlineBudget but in tests (Options.inlineBudget); 0:
	// inlineBudget.
	budget time.Duration
}

// begin numbers the loop's next request and starts its budget; the timer
// is set unless it is already (its callback then sets it again for this
// request: began and running are stored before armed is read).
func (c *inlineCall) begin(s *server) {
	c.count++
	if c.epoch.IsZero() {
		c.epoch = time.Now()
	}
	c.began.Store(int64(time.Since(c.epoch)))
	c.running.Store(c.count)
	if c.armed.Swap(true) {
		return
	}
	if t := c.timer.Load(); t != nil {
		t.Reset(c.budgetOr())
		return
	}
	c.timer.Store(time.AfterFunc(c.budgetOr(), func() { c.fired(s) }))
}

// budgetOr is the budget, inlineBudget when none was given.
func (c *inlineCall) budgetOr() time.Duration { return cmp.Or(c.budget, inlineBudget) }

// end says the request answered, its reply written: a reply's write that
// blocks (a client that writes without reading) has what follows read
// aside as the request did. The timer is left set (inlineCall).
func (c *inlineCall) end() { c.running.Store(0) }

// fired is the timer's callback: it reads aside when the request being
// answered has used its budget, sets the timer again for the rest of one
// that has not, and does nothing when none is being answered.
func (c *inlineCall) fired(s *server) {
	c.armed.Store(false)
	n := c.running.Load()
	if n == 0 {
		return
	}
	if left := c.budgetOr() - (time.Since(c.epoch) - time.Duration(c.began.Load())); left > 0 {
		if !c.armed.Swap(true) {
			c.timer.Load().Reset(left)
		}
		return
	}
	if c.aside != nil {
		c.aside(n)
		return
	}
	c.readAside(s, n)
}

// readAside reads the messages that follow beside request n, being
// answered, until it is. A timer that fired for a request answered since
// finds the request ended at once (running is no longer n): it reads
// nothing. A read's error (the client gone) cancels every request being
// answered, the loop's among them: the connection is ending, and the loop
// learns it only once its request returns.
func (c *inlineCall) readAside(s *server, n uint64) {
	c.readers.Add(1)
	defer c.readers.Done()
	s.stream.readAside(s.ctx, func() bool { return c.running.Load() != n }, s.takeAside, s.cancelAll)
}

// waitReaders waits at most d for the readers aside to end (one may be in a
// read that the connection's close does not end, as jsonrpc2's loop may).
func (c *inlineCall) waitReaders(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		c.readers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// takeAside handles a message read beside a request the loop answers
// (readAside) as the loop would have: false for a response, which only
// the loop can route to the server's request that waits for it.
func (s *server) takeAside(msg jsonrpc2.Message) bool {
	req, ok := msg.(jsonrpc2.Request)
	if !ok {
		return false
	}
	s.dispatch(s.ctx, s.asideReplier(req), req, false)
	return true
}

// asideReplier answers a request read aside as jsonrpc2's own replier
// does (a response framed and written through the stream; a notification
// gets none): the loop's replier is made by the loop only.
func (s *server) asideReplier(req jsonrpc2.Request) jsonrpc2.Replier {
	call, ok := req.(*jsonrpc2.Call)
	if !ok {
		return func(context.Context, any, error) error { return nil }
	}
	return func(ctx context.Context, result any, err error) error {
		resp, err := jsonrpc2.NewResponse(call.ID(), result, err)
		if err != nil {
			return fmt.Errorf("making the response: %w", err)
		}
		if _, err := s.stream.Write(ctx, resp); err != nil {
			return fmt.Errorf("write to stream: %w", err)
		}
		return nil
	}
}
