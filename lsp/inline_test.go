package lsp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

// onLoop reports whether the caller runs on jsonrpc2's loop, not on a
// worker or a goroutine reading aside (inline.go).
func onLoop() bool {
	buf := make([]byte, 64<<10)
	stack := buf[:runtime.Stack(buf, false)]
	return bytes.Contains(stack, []byte("jsonrpc2.(*conn).run")) && !bytes.Contains(stack, []byte("readAside"))
}

// TestSearchAnsweredOnLoop: once the first index has ended, run/search and
// workspace/symbol are answered on jsonrpc2's loop (inline.go); a search
// sent while the first index is built waits for it on a worker, where the
// loop reads on.
func TestSearchAnsweredOnLoop(t *testing.T) {
	fake := newFake()
	fake.refreshGate = make(chan struct{})
	where := make(chan bool, 16)
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		where <- onLoop()
		return retriever.Result{}, nil
	}
	fake.onSymbols = func() { where <- onLoop() }
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)

	early := make(chan error, 1)
	go func() { early <- c.call(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, nil) }()
	time.Sleep(50 * time.Millisecond) // the search waits for the first index
	var info map[string]any
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info) // the loop reads on meanwhile
	close(fake.refreshGate)
	if err := <-early; err != nil {
		t.Fatalf("run/search during the first index: %v", err)
	}
	if <-where {
		t.Error("a search sent during the first index was answered on the loop")
	}

	// The generation is ready once its first index has ended: searched until
	// one is answered on the loop, every one after it is too.
	deadline := time.Now().Add(waitTimeout)
	for c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, nil); !<-where; c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, nil) {
		if time.Now().After(deadline) {
			t.Fatal("no search was answered on the loop once the index was ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for range 3 {
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, nil)
		if !<-where {
			t.Error("run/search with the index ready was not answered on the loop")
		}
		c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, nil)
		if !<-where {
			t.Error("workspace/symbol with the index ready was not answered on the loop")
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestSlowSearchReadsAside: a search answered on the loop that takes longer
// than its budget has the messages that follow read beside it: a request
// is answered meanwhile (on a worker), a notification handled, and the
// search's own answer comes when it is made.
func TestSlowSearchReadsAside(t *testing.T) {
	fake := newFake()
	release := make(chan struct{})
	entered := make(chan bool, 1)
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		if req.Query == "slow" {
			entered <- onLoop()
			<-release
		}
		return retriever.Result{Items: []retriever.Item{{Text: req.Query}}}, nil
	}
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	var freeOnce sync.Once
	free := func() { freeOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server's shutdown (cleanups run last first)
	c.initialize("/fake/run", false, nil)
	waitAnsweredOnLoop(t, c, fake)

	answered := make(chan error, 1)
	var slow struct{ Items []struct{ Text string } }
	go func() { answered <- c.call(lsp.MethodRunSearch, map[string]any{"query": "slow"}, &slow) }()
	if !<-entered {
		t.Fatal("the slow search was not answered on the loop: nothing is read aside")
	}
	// While it is being made: a notification, then requests, each answered
	// (a client's write blocks on net.Pipe until the server reads it).
	var quick struct{ Items []struct{ Text string } }
	var asideErr error
	aside := make(chan struct{})
	go func() {
		defer close(aside)
		c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{"topK": 7}}})
		var info map[string]any
		if asideErr = c.call(lsp.MethodRunInfo, map[string]any{}, &info); asideErr == nil {
			asideErr = c.call(lsp.MethodRunSearch, map[string]any{"query": "quick"}, &quick)
		}
	}()
	select {
	case <-aside:
	case <-time.After(waitTimeout):
		t.Fatal("nothing was read beside the slow search")
	}
	if asideErr != nil {
		t.Fatalf("a request read aside: %v", asideErr)
	}
	if len(quick.Items) != 1 || quick.Items[0].Text != "quick" {
		t.Errorf("a search read aside answered %+v", quick)
	}
	fake.mu.Lock()
	last := fake.requests[len(fake.requests)-1]
	fake.mu.Unlock()
	if last.Query != "quick" || last.TopK != 7 {
		t.Errorf("the search read aside was asked %+v: want the topK of the configuration sent before it (7)", last)
	}
	select {
	case err := <-answered:
		t.Fatalf("the slow search was answered before it was made: %v", err)
	default:
	}
	free()
	if err := <-answered; err != nil || len(slow.Items) != 1 || slow.Items[0].Text != "slow" {
		t.Fatalf("the slow search answered %+v, %v", slow, err)
	}
	// The loop reads again: the next search is answered on it.
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "again"}, nil)
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// waitAnsweredOnLoop searches until a search is answered on jsonrpc2's
// loop: the engine's first index has ended.
func waitAnsweredOnLoop(t *testing.T, c *client, fake *fakeEngine) {
	t.Helper()
	found := make(chan bool, 1)
	deadline := time.Now().Add(waitTimeout)
	for {
		fake.mu.Lock()
		f := fake.search
		fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
			found <- onLoop()
			return retriever.Result{}, nil
		}
		fake.mu.Unlock()
		var res json.RawMessage
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "probe"}, &res)
		fake.mu.Lock()
		fake.search = f
		fake.requests = nil
		fake.mu.Unlock()
		if <-found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no search was answered on the loop")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
