package lsp

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/retriever"
)

// Options configure Serve.
type Options struct {
	// Logger receives the server's log; nil: nothing is logged. It must never
	// write to the connection's output.
	Logger *zap.Logger
	// Version is reported to the client in serverInfo.
	Version string
	// Open opens the engine on a run folder; nil: retriever.Open. Tests give
	// their own to control timing.
	Open func(context.Context, retriever.Options) (Engine, error)
	// Cache is where the engine keeps the run's index between opens
	// (spec §15); its zero value: nowhere.
	Cache retriever.CacheOptions
	// BoundMemory is retriever.Options.BoundMemory, for a process that
	// serves one connection (runls serve).
	BoundMemory bool
	// PollInterval is how often the index is refreshed when the engine cannot
	// watch the file system; 0: DefaultPollInterval.
	PollInterval time.Duration
	// IdleMerge is how long the server waits with no request being
	// answered, after its first index, before it asks the engine for its
	// idle merges (Engine.MergeIdle); 0: DefaultIdleMerge.
	IdleMerge time.Duration

	// inlineBudget is inline.go's budget; 0: inlineBudget. The tests' own
	// (export_test.go: WithInlineBudget), where a loaded machine held a
	// quick request on the loop past 2 ms and its reader aside took the
	// next one that a test asserted was answered on the loop.
	inlineBudget time.Duration
}

// DefaultPollInterval is the refresh period used when Watch is not available.
const DefaultPollInterval = 2 * time.Second

// DefaultIdleMerge is the pause in requests after which a server merges
// what a reopen left part-merged: well past the gap between a person's
// searches in one line of questioning (a keystroke, a reading of the
// answer) and an agent's back-to-back calls, so a merge (11-17 s at 1 GB)
// does not take a core beside them, yet short beside the minutes a run
// is kept open, so an entry opened once is merged before it is closed.
const DefaultIdleMerge = 2 * time.Second

// Engine is what the server needs of the engine; *retriever.Index has it.
type Engine interface {
	Root() string
	IsRunFolder() bool
	Refresh(ctx context.Context, progress func(retriever.Progress)) (retriever.Changes, error)
	Search(ctx context.Context, req retriever.Request) (retriever.Result, error)
	Symbols(ctx context.Context, query string, limit int) (retriever.Result, error)
	Info(ctx context.Context) (retriever.Info, error)
	RecordFiles() []string
	Diagnostics(path string, max int, leaveOut ...string) []retriever.Diagnostic
	Outline(ctx context.Context, path string, limit int) (retriever.Outline, error)
	Folds(path string) []retriever.Fold
	RecordAt(ctx context.Context, path string, line int, req retriever.Request) (*retriever.RecordFacts, error)
	Records(ctx context.Context, req retriever.RecordsRequest) (retriever.RecordsResult, error)
	Failures(ctx context.Context, req retriever.FailuresRequest) (retriever.FailuresResult, error)
	Conversations(ctx context.Context, episode string) ([]retriever.ConversationSummary, error)
	Watch(ctx context.Context, onChange func(retriever.Changes)) error
	// MergeIdle starts the merges the engine's policy picks now, apart
	// from any request; the server calls it once idle after its first
	// index (a reopen merges nothing beside its first answer).
	MergeIdle()
	Close() error
}

var _ Engine = (*retriever.Index)(nil)

// PartialSearcher is an Engine that can answer a search and the symbols
// while its first index is built, from what is indexed so far and saying so
// (retriever.Index.SearchPartial, SymbolsPartial); run/search and
// workspace/symbol use it after retriever.PartialGrace (partial.go).
type PartialSearcher interface {
	SearchPartial(ctx context.Context, req retriever.Request) (retriever.Result, error)
	SymbolsPartial(ctx context.Context, query string, limit int) (retriever.Result, error)
}

var _ PartialSearcher = (*retriever.Index)(nil)

// ErrExitWithoutShutdown is returned by Serve when the client sent exit before
// shutdown, or went away without either: the process should exit with code 1.
var ErrExitWithoutShutdown = errors.New("lsp: the connection ended without a shutdown request")

// Serve speaks LSP over rwc until the client sends exit or closes the
// connection, or ctx ends. It returns nil after shutdown (then exit, or a
// closed connection), ErrExitWithoutShutdown otherwise.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	s := newServer(ctx, rwc, opts)
	return s.run()
}

// state is where the server is in the LSP lifecycle.
type state int

const (
	stateCreated     state = iota // waiting for initialize
	stateInitialized              // initialize answered
	stateShutdown                 // shutdown answered: only exit is accepted
)

// server holds everything a connection needs. Its handlers are in handlers.
type server struct {
	opts   Options
	logger *zap.Logger
	conn   jsonrpc2.Conn
	stream *stream
	client protocol.Client
	custom map[string]jsonrpc2.Handler // customHandlers, made once

	// ctx ends when the connection ends; background work runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines and requests being answered
	// workers answer the requests served concurrently (serveAsync).
	workers *workers
	// inline is the request jsonrpc2's loop answers itself (inline.go).
	inline inlineCall

	mu      sync.Mutex
	state   state
	exited  bool
	exitCh  chan struct{} // closed by exit
	closing bool          // run waits for the tracked goroutines: start no more
	root    string        // the run folder as the client named it; "" when none
	// workspace is the folder the client opened, and rootHow how root was
	// found from it (findRunFolder).
	workspace, rootHow string
	noRoot             string     // why there is no run folder, when root is ""
	caps               clientCaps // what the client announced at initialize
	settings           Settings
	gen                *generation // the engine serving now
	started            bool        // the first generation was started
	shownWhy           bool        // the "not a run folder" message was shown

	progressSeq atomic.Int64 // numbers the progress tokens the server creates

	cancelMu     sync.Mutex
	inflight     map[jsonrpc2.ID]*inflight
	lastAnswered time.Time // when the last request answered apart (beginCall: on a worker or the loop) ended

	diagMu    sync.Mutex
	published map[string]bool // record files with diagnostics showing in the client
	opened    map[string]bool // files open in the editor
}

func newServer(ctx context.Context, rwc io.ReadWriteCloser, opts Options) *server {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Open == nil {
		opts.Open = func(ctx context.Context, o retriever.Options) (Engine, error) {
			ix, err := retriever.Open(ctx, o)
			if err != nil {
				return nil, err
			}
			return ix, nil
		}
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.IdleMerge <= 0 {
		opts.IdleMerge = DefaultIdleMerge
	}
	s := &server{
		opts:      opts,
		logger:    opts.Logger,
		inflight:  make(map[jsonrpc2.ID]*inflight),
		published: make(map[string]bool),
		opened:    make(map[string]bool),
		settings:  defaultSettings(),
		exitCh:    make(chan struct{}),
	}
	s.inline.budget = opts.inlineBudget
	s.custom = s.customHandlers()
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.workers = newWorkers(s.ctx)
	s.stream = newStream(rwc, s.logger.Named("stream"))
	s.conn = jsonrpc2.NewConn(s.stream)
	// The client is kept here, not in a context: protocol.WithClient and
	// protocol.WithLogger use the same context key (two struct{} values), so a
	// context holding one loses the other.
	s.client = protocol.ClientDispatcher(s.conn, s.logger.Named("client"))
	return s
}

// run serves until the connection ends, then stops all background work.
func (s *server) run() error {
	s.conn.Go(s.ctx, s.handle)
	select {
	case <-s.conn.Done():
	case <-s.exitCh:
	case <-s.ctx.Done():
		_ = s.conn.Close()
	}
	// Closing the connection ends a read blocked on a pipe or a socket, but
	// not on every kind of file: do not wait forever for the reader.
	select {
	case <-s.conn.Done():
	case <-time.After(time.Second):
		s.logger.Warn("the connection's reader did not stop")
	}
	s.cancel()
	s.cancelAll()
	if !s.inline.waitReaders(time.Second) {
		s.logger.Warn("a reader beside a request did not stop")
	}
	s.mu.Lock()
	gen := s.gen
	s.gen = nil
	shutdown := s.state == stateShutdown
	s.mu.Unlock()
	s.retire(gen)
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.wg.Wait() // requests, indexing, and the closing of every engine
	s.workers.wait()
	if err := s.conn.Err(); err != nil && !s.exitedCleanly() {
		s.logger.Debug("connection ended", zap.Error(err))
	}
	if !shutdown {
		return ErrExitWithoutShutdown
	}
	return nil
}

func (s *server) exitedCleanly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

// track counts one more goroutine that run waits for, unless run is already
// waiting (then the work is not started).
func (s *server) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

// goBackground runs f as background work of the connection.
func (s *server) goBackground(f func()) {
	if !s.track() {
		return
	}
	go func() {
		defer s.wg.Done()
		defer s.recoverLog("background work")
		f()
	}()
}

// recoverLog logs a panic instead of letting it end the process: an editor
// loses its server when it crashes, and every panic here is a bug to report.
func (s *server) recoverLog(what string) {
	if p := recover(); p != nil {
		s.logger.Error("panic", zap.String("in", what), zap.Any("panic", p), zap.Stack("stack"))
	}
}

// handlers holds the LSP methods, each thin: look up, call the engine,
// convert. Methods not served are in unimplemented.go.
type handlers struct{ s *server }
