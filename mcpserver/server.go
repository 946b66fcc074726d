package mcpserver

// This file holds the server: the engine it serves, its options, the first
// indexing that every tool waits for, and the session's lifetime.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"runls/masking"
	"runls/retriever"
)

// Engine is what the server needs of the index (a *retriever.Index).
type Engine interface {
	Root() string
	Refresh(ctx context.Context, progress func(retriever.Progress)) (retriever.Changes, error)
	Watch(ctx context.Context, onChange func(retriever.Changes)) error
	Search(ctx context.Context, req retriever.Request) (retriever.Result, error)
	Records(ctx context.Context, req retriever.RecordsRequest) (retriever.RecordsResult, error)
	Info(ctx context.Context) (retriever.Info, error)
	ReadLines(ctx context.Context, req retriever.ReadRequest) (retriever.Lines, error)
}

var _ Engine = (*retriever.Index)(nil)

// PartialSearcher is an Engine that can answer a search while its first
// index is built, from what is indexed so far, with the indexing notice
// (retriever.Index.SearchPartial): the search tool then answers after the
// engine's grace (retriever.Index.AnswerGrace, else retriever.PartialGrace)
// instead of waiting for the whole index.
type PartialSearcher interface {
	SearchPartial(ctx context.Context, req retriever.Request) (retriever.Result, error)
}

var _ PartialSearcher = (*retriever.Index)(nil)

// Options configure a Server.
type Options struct {
	// Version is the server's version, as the client is told.
	Version string
	// Masker is the engine's masker, applied once more to every text a tool
	// returns; nil: masking is off.
	Masker masking.Masker
	// Logger receives the server's log; nil: nothing is logged.
	Logger *zap.Logger
	// ProgressEvery is the least time between two progress notifications of
	// one call; 0: 100 ms.
	ProgressEvery time.Duration
	// IdleMerge is the pause in tool calls, after the first indexing, after
	// which an engine that merges on demand (IdleMerger) is asked to
	// (idle.go); 0: DefaultIdleMerge, below 0: never.
	IdleMerge time.Duration
}

// Server answers the tools of spec §14 from one engine.
type Server struct {
	eng   Engine
	opts  Options
	log   *zap.Logger
	mcp   *mcp.Server
	index *firstIndexing
	// inputs are the tools' input schemas, by name, to explain a bad argument.
	inputs map[string]*jsonschema.Schema
	ran    atomic.Bool
	busy   busyCalls
}

// New makes a server over eng. It reads nothing until Run.
func New(eng Engine, opts Options) (*Server, error) {
	if opts.Masker == masking.NoOp() {
		opts.Masker = nil
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 100 * time.Millisecond
	}
	if opts.IdleMerge == 0 {
		opts.IdleMerge = DefaultIdleMerge
	}
	s := &Server{eng: eng, opts: opts, log: opts.Logger, index: newFirstIndexing(), inputs: map[string]*jsonschema.Schema{}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "runls", Title: "runls: the agents' run", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	if err := s.addTools(); err != nil {
		return nil, err
	}
	// A later middleware runs first: masking sees the answer last.
	s.mcp.AddReceivingMiddleware(s.plainArgumentErrors)
	if s.opts.Masker != nil {
		s.mcp.AddReceivingMiddleware(s.maskAnswers)
	}
	s.mcp.AddReceivingMiddleware(emptyIsAbsent)
	s.mcp.AddReceivingMiddleware(s.busy.track)
	return s, nil
}

// Run indexes the run in the background and answers over t until the client
// ends the session or ctx ends. The index is kept current as the files grow.
// A server serves one session: Run returns an error when called again.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if !s.ran.CompareAndSwap(false, true) {
		return errors.New("mcpserver: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		s.indexAndWatch(ctx)
	}()
	defer bg.Wait()
	defer cancel()
	err := s.mcp.Run(ctx, t)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

const instructions = `runls serves the files that the AI agents of one run wrote, as read-only evidence. ` +
	`The run folder holds episode-N/<agent>/ folders; each agent's .history and .log files are records ` +
	`(timestamped lines that carry an episode state and a conversation id), and every other text file is notes. ` +
	`Call run_info first: it lists the episodes, their agents and their conversation ids. ` +
	`Then call search: a good first query is the chat turn's message (turnMessage), narrowed with episode and conversation; ` +
	`records are searched only when both episode and conversation are given (without them only notes are), ` +
	`and records of the current episode only in that conversation. ` +
	`Each hit reads episode-N/<agent>/<file>:<line>: <text>; call read with that path and line to see the lines around it. ` +
	`To follow a conversation step by step, call records with episode and conversation: its records, whole, in time order across agents. ` +
	`Nothing outside the run folder is ever read.`

// indexAndWatch runs the first indexing, then keeps the index current until
// ctx ends (searches refresh on their own; this only spares them the work).
func (s *Server) indexAndWatch(ctx context.Context) {
	start := time.Now()
	_, err := s.eng.Refresh(ctx, s.index.report)
	close(s.index.done)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("indexing", zap.String("root", s.eng.Root()), zap.Error(err))
		}
		return
	}
	s.log.Info("indexed", zap.String("root", s.eng.Root()), zap.Duration("took", time.Since(start)))
	var merging sync.WaitGroup
	merging.Add(1)
	go func() {
		defer merging.Done()
		s.mergeWhenIdle(ctx)
	}()
	defer merging.Wait()
	if err := s.eng.Watch(ctx, func(retriever.Changes) {}); err != nil && ctx.Err() == nil {
		s.log.Warn("watching the run stopped; each call still reads what changed", zap.Error(err))
	}
}

// firstIndexing is the state of the first indexing, which every tool waits
// for. A failed indexing is logged and waited for no more: each search
// refreshes the index itself and says what fails.
type firstIndexing struct {
	done chan struct{}

	mu      sync.Mutex
	last    retriever.Progress
	changed chan struct{} // closed and replaced at each report
}

func newFirstIndexing() *firstIndexing {
	return &firstIndexing{done: make(chan struct{}), changed: make(chan struct{})}
}

func (f *firstIndexing) report(p retriever.Progress) {
	f.mu.Lock()
	f.last = p
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

func (f *firstIndexing) progress() (retriever.Progress, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.changed
}

// waitIndexedOrGrace waits for the first indexing at most the engine's
// grace (as waitIndexed does, progress and all).
func (s *Server) waitIndexedOrGrace(ctx context.Context, req *mcp.CallToolRequest) error {
	gctx, cancel := context.WithTimeout(ctx, s.answerGrace())
	defer cancel()
	if err := s.waitIndexed(gctx, req); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// answerGrace is how long the first indexing is waited for before a
// partial answer: the engine's own (retriever.Index.AnswerGrace: 50 ms for
// an index restored from its cache entry, none from 20,000 files), else
// retriever.PartialGrace.
func (s *Server) answerGrace() time.Duration { return retriever.GraceOf(s.eng) }

// indexed reports whether the first indexing has ended.
func (f *firstIndexing) indexed() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// waitIndexed waits for the first indexing, sending progress notifications
// for a call that carries a progress token; it returns ctx's error when the
// call is cancelled first.
func (s *Server) waitIndexed(ctx context.Context, req *mcp.CallToolRequest) error {
	select {
	case <-s.index.done:
		return nil
	default:
	}
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	var sent int64 = -1
	var lastSent time.Time
	for {
		p, changed := s.index.progress()
		if token != nil && p.BytesDone > sent && time.Since(lastSent) >= s.opts.ProgressEvery {
			sent, lastSent = p.BytesDone, time.Now()
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(p.BytesDone),
				Total:         float64(max(p.BytesTotal, p.BytesDone)),
				Message:       fmt.Sprintf("indexing the run: %d of %d files", p.FilesDone, p.FilesTotal),
			})
			if err != nil && ctx.Err() == nil {
				s.log.Debug("progress notification", zap.Error(err))
			}
		}
		var tick <-chan time.Time
		if token != nil && p.BytesDone > sent {
			tick = time.After(s.opts.ProgressEvery - time.Since(lastSent))
		}
		select {
		case <-s.index.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick:
		}
	}
}
