package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"runls/lsp"
	"runls/retriever"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with the file testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n got %s\nwant %s", name, path, got, want)
	}
}

// waitTimeout bounds every wait for the server; tests never time anything.
const waitTimeout = 20 * time.Second

// note is a message the server sent to the client.
type note struct {
	method string
	params json.RawMessage
	call   bool
}

// client is an editor talking to an in-process server over net.Pipe, through
// the jsonrpc2 package's own client side.
type client struct {
	t    *testing.T
	conn jsonrpc2.Conn
	done chan error // Serve's result

	mu      sync.Mutex
	notes   []note
	changed chan struct{}
}

type startOpts struct {
	open         func(context.Context, retriever.Options) (lsp.Engine, error)
	pollInterval time.Duration
	idleMerge    time.Duration
	logger       *zap.Logger   // nil: the test's log at debug
	inlineBudget time.Duration // 0: the server's own (inline.go)
}

// start starts a server; the client is not initialized yet.
func start(t *testing.T, so startOpts) *client {
	t.Helper()
	a, b := net.Pipe()
	c := &client{t: t, done: make(chan error, 1), changed: make(chan struct{})}
	logger := so.logger
	if logger == nil {
		logger = zaptest.NewLogger(t, zaptest.Level(zap.DebugLevel))
	}
	go func() {
		c.done <- lsp.Serve(context.Background(), a, lsp.WithInlineBudget(lsp.Options{
			Logger: logger, Version: "test", Open: so.open, PollInterval: so.pollInterval, IdleMerge: so.idleMerge,
		}, so.inlineBudget))
	}()
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	c.conn.Go(context.Background(), c.handle)
	t.Cleanup(func() {
		_ = c.conn.Close()
		<-c.conn.Done()
		select {
		case <-c.done:
		case <-time.After(waitTimeout):
			t.Errorf("Serve did not return after the connection closed")
		}
	})
	return c
}

func (c *client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	_, isCall := req.(*jsonrpc2.Call)
	c.mu.Lock()
	c.notes = append(c.notes, note{method: req.Method(), params: append(json.RawMessage(nil), req.Params()...), call: isCall})
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	if req.Method() == protocol.MethodWorkDoneProgressCreate {
		return reply(ctx, nil, nil)
	}
	return reply(ctx, nil, jsonrpc2.ErrMethodNotFound)
}

// waitFor returns the first message from the server that matches, waiting for it.
func (c *client) waitFor(what string, match func(note) bool) note {
	c.t.Helper()
	return c.waitForAfter(0, what, match)
}

// mark is the number of messages the server has sent so far.
func (c *client) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.notes)
}

// waitForAfter is waitFor among the messages sent after mark.
func (c *client) waitForAfter(mark int, what string, match func(note) bool) note {
	c.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		c.mu.Lock()
		for _, n := range c.notes[mark:] {
			if match(n) {
				c.mu.Unlock()
				return n
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("waited in vain for %s; the server sent: %s", what, c.methods())
		}
	}
}

func (c *client) methods() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := ""
	for _, n := range c.notes {
		s += n.method + " " + string(n.params) + "\n"
	}
	return s
}

func (c *client) sent(match func(note) bool) []note {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []note
	for _, n := range c.notes {
		if match(n) {
			out = append(out, n)
		}
	}
	return out
}

func method(m string) func(note) bool { return func(n note) bool { return n.method == m } }

// call sends a request and decodes its result into result.
func (c *client) call(method string, params, result any) error {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}

func (c *client) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// waitIndexed waits until run/info says the first index is done: a search
// answers from what is indexed after the answer grace (spec §12), so on a
// loaded machine one no longer waits for the whole run.
func (c *client) waitIndexed() {
	c.t.Helper()
	waitInfoDone(c.t, waitTimeout, func() retriever.Info {
		var info retriever.Info
		c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
		return info
	})
}

// waitInfoDone asks info (a client's run/info) until it says the index
// done, failing t after limit.
func waitInfoDone(t testing.TB, limit time.Duration, info func() retriever.Info) {
	t.Helper()
	for deadline := time.Now().Add(limit); !info().Indexing.Done; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run/info did not say the index done within %v", limit)
		}
	}
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("notify %s: %v", method, err)
	}
}

// initialize sends initialize (with the capabilities of an editor such as
// VS Code, window.workDoneProgress when progress is set, and the settings
// as initializationOptions) and initialized.
func (c *client) initialize(root string, progress bool, settings map[string]any) map[string]any {
	c.t.Helper()
	return c.initializeWith(root, fullCapabilities(progress), settings)
}

// fullCapabilities are what VS Code and Neovim announce of what runls
// answers: hierarchical document symbols, every symbol kind, Markdown hovers.
func fullCapabilities(progress bool) map[string]any {
	kinds := make([]int, 26)
	for i := range kinds {
		kinds[i] = i + 1
	}
	return map[string]any{
		"window": map[string]any{"workDoneProgress": progress},
		"textDocument": map[string]any{
			"documentSymbol": map[string]any{"hierarchicalDocumentSymbolSupport": true, "symbolKind": map[string]any{"valueSet": kinds}},
			"hover":          map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
		},
	}
}

// initializeWith is initialize with the capabilities given.
func (c *client) initializeWith(root string, capabilities, settings map[string]any) map[string]any {
	c.t.Helper()
	params := map[string]any{
		"processId":    nil,
		"capabilities": capabilities,
	}
	if root != "" {
		params["rootUri"] = retriever.FileURI(root)
	}
	if settings != nil {
		params["initializationOptions"] = map[string]any{"runls": settings}
	}
	var result map[string]any
	c.mustCall(protocol.MethodInitialize, params, &result)
	c.notify(protocol.MethodInitialized, map[string]any{})
	return result
}

// shutdownExit ends the session properly and returns Serve's result.
func (c *client) shutdownExit() error {
	c.t.Helper()
	c.mustCall(protocol.MethodShutdown, nil, nil)
	c.notify(protocol.MethodExit, nil)
	return c.serveResult()
}

func (c *client) serveResult() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		c.done <- err // for Cleanup
		return err
	case <-time.After(waitTimeout):
		c.t.Fatalf("Serve did not return")
		return nil
	}
}

// codeOf is the JSON-RPC error code of err, or 0.
func codeOf(err error) jsonrpc2.Code {
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// fakeEngine is an Engine whose behaviour tests set, for the protocol cases
// that need control over timing (blocking searches, indexing that waits).
type fakeEngine struct {
	opts   retriever.Options
	notRun bool

	refreshGate chan struct{} // Refresh waits for it when not nil

	mu           sync.Mutex
	requests     []retriever.Request
	recordsAsked int
	search       func(ctx context.Context, req retriever.Request) (retriever.Result, error)
	diags        map[string][]retriever.Diagnostic
	onDiags      func(path string) // called by Diagnostics, without the lock, when set
	onChange     func(retriever.Changes)
	watching     chan struct{}
	closed       bool
	mergedIdle   chan time.Time // MergeIdle's calls, when not nil
	onSymbols    func()         // called by Symbols, when set
}

func newFake() *fakeEngine {
	return &fakeEngine{diags: map[string][]retriever.Diagnostic{}, watching: make(chan struct{})}
}

// opener returns an Open func handing out e, recording each Options given.
func (e *fakeEngine) opener(opened *[]retriever.Options, mu *sync.Mutex) func(context.Context, retriever.Options) (lsp.Engine, error) {
	return func(_ context.Context, o retriever.Options) (lsp.Engine, error) {
		if mu != nil {
			mu.Lock()
			*opened = append(*opened, o)
			mu.Unlock()
		}
		e.mu.Lock()
		e.opts = o
		e.mu.Unlock()
		return e, nil
	}
}

func (e *fakeEngine) Root() string      { return "/fake/run" }
func (e *fakeEngine) IsRunFolder() bool { return !e.notRun }
func (e *fakeEngine) Refresh(ctx context.Context, progress func(retriever.Progress)) (retriever.Changes, error) {
	if e.refreshGate != nil {
		select {
		case <-e.refreshGate:
		case <-ctx.Done():
			return retriever.Changes{}, ctx.Err()
		}
	}
	for i := 1; i <= 4; i++ {
		progress(retriever.Progress{FilesDone: i, FilesTotal: 4, BytesDone: int64(i * 100), BytesTotal: 400})
	}
	e.mu.Lock()
	logger := e.opts.Logger
	e.mu.Unlock()
	if logger != nil {
		logger.Warn("skipped a link to outside the run folder", zap.String("path", "/fake/run/episode-1/a/link"))
	}
	return retriever.Changes{}, nil
}
func (e *fakeEngine) Search(ctx context.Context, req retriever.Request) (retriever.Result, error) {
	e.mu.Lock()
	e.requests = append(e.requests, req)
	f := e.search
	e.mu.Unlock()
	if f != nil {
		return f(ctx, req)
	}
	return retriever.Result{Items: []retriever.Item{{
		Location: retriever.Location{URI: "file:///fake/run/episode-1/a/notes.txt"},
		Score:    1.5, Text: "echo " + req.Query, Agent: "a", Episode: "episode-1", Reading: retriever.ReadingNote,
	}}}, nil
}
func (e *fakeEngine) Symbols(ctx context.Context, query string, limit int) (retriever.Result, error) {
	if e.onSymbols != nil {
		e.onSymbols()
	}
	conv := "conv-1"
	return retriever.Result{Items: []retriever.Item{{
		Location: retriever.Location{URI: "file:///fake/run/episode-2/bob/chat.history",
			Range: retriever.Range{Start: retriever.Position{Line: 3, Character: 40}, End: retriever.Position{Line: 3, Character: 52}}},
		Score: 2, Text: "symbol for " + query, Agent: "bob", Episode: "episode-2", Conversation: &conv,
		Reading: retriever.ReadingNote, File: "episode-2/bob/chat.history",
	}}}, nil
}
func (e *fakeEngine) Info(ctx context.Context) (retriever.Info, error) {
	return retriever.Info{Root: "file:///fake/run"}, nil
}
func (e *fakeEngine) RecordFiles() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for f := range e.diags {
		out = append(out, f)
	}
	return out
}
func (e *fakeEngine) Diagnostics(path string, max int, leaveOut ...string) []retriever.Diagnostic {
	e.mu.Lock()
	hook := e.onDiags
	e.mu.Unlock()
	if hook != nil {
		hook(path)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.diags[path]
}
func (e *fakeEngine) Outline(ctx context.Context, path string, limit int) (retriever.Outline, error) {
	return retriever.Outline{}, nil
}
func (e *fakeEngine) Folds(path string) []retriever.Fold { return nil }
func (e *fakeEngine) RecordAt(ctx context.Context, path string, line int, req retriever.Request) (*retriever.RecordFacts, error) {
	return nil, nil
}
func (e *fakeEngine) Records(ctx context.Context, req retriever.RecordsRequest) (retriever.RecordsResult, error) {
	e.mu.Lock()
	e.recordsAsked++
	e.mu.Unlock()
	return retriever.RecordsResult{Records: []retriever.Record{}}, nil
}
func (e *fakeEngine) Failures(ctx context.Context, req retriever.FailuresRequest) (retriever.FailuresResult, error) {
	return retriever.FailuresResult{Groups: []retriever.FailureGroup{}}, nil
}
func (e *fakeEngine) MergeIdle() {
	if e.mergedIdle != nil {
		e.mergedIdle <- time.Now()
	}
}

func (e *fakeEngine) Conversations(ctx context.Context, episode string) ([]retriever.ConversationSummary, error) {
	return []retriever.ConversationSummary{}, nil
}
func (e *fakeEngine) Watch(ctx context.Context, onChange func(retriever.Changes)) error {
	e.mu.Lock()
	e.onChange = onChange
	e.mu.Unlock()
	close(e.watching)
	<-ctx.Done()
	return ctx.Err()
}
func (e *fakeEngine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return nil
}

// change sets a file's diagnostics (nil: the file is gone or clean) and
// reports it as the watcher would.
func (e *fakeEngine) change(path string, ds []retriever.Diagnostic) {
	select {
	case <-e.watching:
	case <-time.After(waitTimeout):
		panic("the server never watched")
	}
	e.mu.Lock()
	if ds == nil {
		delete(e.diags, path)
	} else {
		e.diags[path] = ds
	}
	f := e.onChange
	e.mu.Unlock()
	f(retriever.Changes{Files: []string{path}})
}

func (e *fakeEngine) lastRequest() retriever.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.requests) == 0 {
		return retriever.Request{}
	}
	return e.requests[len(e.requests)-1]
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}

// rawJSON sends params as written.
func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }
