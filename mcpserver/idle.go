package mcpserver

// This file holds the idle merge: once the first indexing has ended and no
// tool call has been answered for a while, the engine is asked to merge the
// segments its policy picks, as the language server does
// (lsp.DefaultIdleMerge): a reopen that found the run as its entry left it
// merges nothing itself, so an entry left part-merged (a server closed soon
// after its first index, or a command's first index) would stay so for the
// whole session, and every search would pay its extra segments.

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/internal/quiet"
	"runls/retriever"
)

// DefaultIdleMerge is the pause in tool calls after which the server asks
// the engine for its merges (lsp.DefaultIdleMerge's value).
const DefaultIdleMerge = 2 * time.Second

// IdleMerger is an Engine that merges on demand (retriever.Index.MergeIdle):
// it starts the merges its policy picks apart from the caller, and does
// nothing when there are none or one runs already.
type IdleMerger interface {
	MergeIdle()
}

// The engine merges when idle: were MergeIdle renamed, the build would
// fail here instead of the merges stopping unseen.
var _ IdleMerger = (*retriever.Index)(nil)

// busyCalls tells when the server last answered a call.
type busyCalls struct {
	mu       sync.Mutex
	inFlight int
	last     time.Time
}

// track is a receiving middleware that counts the calls being answered.
func (b *busyCalls) track(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		b.mu.Lock()
		b.inFlight++
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.inFlight--
			b.last = time.Now()
			b.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// lastBusy is when the last call was answered: now while one is.
func (b *busyCalls) lastBusy() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inFlight > 0 {
		return time.Now()
	}
	return b.last
}

// mergeWhenIdle waits until no call has been answered for IdleMerge (counted
// from its own call, the first indexing's end), then asks the engine to
// merge; it returns at once for an engine that cannot, and without asking
// when ctx ends first.
func (s *Server) mergeWhenIdle(ctx context.Context) {
	m, ok := s.eng.(IdleMerger)
	if !ok || s.opts.IdleMerge < 0 {
		return
	}
	if !quiet.Await(ctx, s.opts.IdleMerge, s.busy.lastBusy) {
		return
	}
	s.log.Debug("idle: merging")
	m.MergeIdle()
}
