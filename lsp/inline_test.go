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

// testBudget is the loop's budget in these tests: far above a quick
// request's time even on a loaded machine with -race, where 2 ms was not
// (a quick search held past it had its reader aside take the next request,
// which a test asserted was answered on the loop), and short enough for
// a test to wait past it.
const testBudget = 50 * time.Millisecond

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
		return retriever.Result{Items: []retriever.Item{{
			Location: retriever.Location{URI: "file:///fake/run/episode-1/a/notes.txt"},
			Score:    1.5, Text: "echo \"" + req.Query + "\" \u2028", Agent: "a", Episode: "episode-1", Reading: retriever.ReadingNote,
		}}}, nil
	}
	fake.onSymbols = func() { where <- onLoop() }
	c := start(t, startOpts{open: fake.opener(nil, nil), inlineBudget: testBudget})
	c.initialize("/fake/run", false, nil)

	early := make(chan error, 1)
	var onWorker json.RawMessage
	go func() { early <- c.call(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, &onWorker) }()
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
	if !bytes.Contains(onWorker, []byte("notes.txt")) {
		t.Fatalf("the search on a worker answered %s", onWorker)
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
		var answer json.RawMessage
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, &answer)
		if !<-where {
			t.Error("run/search with the index ready was not answered on the loop")
		}
		if !bytes.Equal(answer, onWorker) {
			t.Errorf("run/search answered on the loop:\n%s\non a worker:\n%s", answer, onWorker)
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
	c := start(t, startOpts{open: fake.opener(nil, nil), inlineBudget: testBudget})
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

// TestSlowSearchAfterQuickReadsAside: the loop's timer is left set when a
// request ends (inline.go), so a slow search that begins right after quick
// ones may find it set for them, fired early for it, and set again for the
// rest of its budget: what follows it is still read aside. End to end, it
// meets that case only when the slow search begins within the budget of
// the last quick one; TestInlineTimerSetAgain (inline_internal_test.go)
// makes it every time.
func TestSlowSearchAfterQuickReadsAside(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil), inlineBudget: testBudget})
	c.initialize("/fake/run", false, nil)
	waitAnsweredOnLoop(t, c, fake)
	release := make(chan struct{})
	var freeOnce sync.Once
	free := func() { freeOnce.Do(func() { close(release) }) }
	t.Cleanup(free)
	for range 20 {
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "quick"}, nil)
	}
	slow, _ := slowOnLoop(t, context.Background(), c, fake, release)
	info := make(chan error, 1)
	go func() {
		var res map[string]any
		info <- c.call(lsp.MethodRunInfo, map[string]any{}, &res)
	}()
	select {
	case err := <-info:
		if err != nil {
			t.Fatalf("run/info read aside: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("nothing was read beside a slow search that began while the timer was set")
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow search was answered before it was made: %v", err)
	default:
	}
	free()
	if err := <-slow; err != nil {
		t.Fatalf("the slow search: %v", err)
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

// slowOnLoop starts a run/search of "slow" that the fake answers only once
// release is closed or its context ends, and waits until it is being made
// on the loop, its budget passed; its answer's error comes on answered,
// the engine's end on ended. Ending ctx cancels it ($/cancelRequest).
func slowOnLoop(t *testing.T, ctx context.Context, c *client, fake *fakeEngine, release <-chan struct{}) (answered <-chan error, ended <-chan error) {
	t.Helper()
	entered := make(chan bool, 1)
	end := make(chan error, 1)
	fake.mu.Lock()
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		if req.Query != "slow" {
			<-ctx.Done() // another search: until cancelled
			return retriever.Result{}, ctx.Err()
		}
		entered <- onLoop()
		select {
		case <-release:
			end <- nil
			return retriever.Result{Items: []retriever.Item{{Text: "slow"}}}, nil
		case <-ctx.Done():
			end <- ctx.Err()
			return retriever.Result{}, ctx.Err()
		}
	}
	fake.mu.Unlock()
	errc := make(chan error, 1)
	go func() { errc <- protocol.Call(ctx, c.conn, lsp.MethodRunSearch, map[string]any{"query": "slow"}, nil) }()
	if !<-entered {
		t.Fatal("the slow search was not answered on the loop")
	}
	time.Sleep(2 * testBudget) // past its budget: the messages that follow are read aside
	return errc, end
}

// TestCancelReadAside: a $/cancelRequest read beside a search being made on
// the loop cancels it, and one for a search read aside (answered on a
// worker) cancels that one; each is answered -32800.
func TestCancelReadAside(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil), inlineBudget: testBudget})
	c.initialize("/fake/run", false, nil)
	waitAnsweredOnLoop(t, c, fake)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	slowCtx, cancelSlow := context.WithCancel(context.Background())
	defer cancelSlow()
	slow, ended := slowOnLoop(t, slowCtx, c, fake, release)

	ctx, cancel := context.WithCancel(context.Background())
	aside := make(chan error, 1)
	go func() {
		aside <- protocol.Call(ctx, c.conn, lsp.MethodRunSearch, map[string]any{"query": "other"}, nil)
	}()
	time.Sleep(20 * time.Millisecond) // read aside, on a worker
	cancel()                          // protocol.Call sends $/cancelRequest
	<-aside
	var info map[string]any
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info) // read aside: the cancel was read before it
	fake.mu.Lock()
	n := len(fake.requests)
	fake.mu.Unlock()
	if n < 2 {
		t.Fatalf("the search read aside never reached the engine (%d searches)", n)
	}

	cancelSlow() // protocol.Call sends $/cancelRequest, read aside
	wantCancelled(t, ended)
	if err := <-slow; err == nil {
		t.Error("the cancelled search on the loop was answered with a result")
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestConnectionEndsDuringSearchOnLoop: the client going away, or exit, while
// a search is being made on the loop cancels it, and Serve returns at once,
// not once the search ends (it would not, uncancelled) or after the second
// it waits for a reader that does not stop.
func TestConnectionEndsDuringSearchOnLoop(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(c *client)
	}{
		{"connection closed", func(c *client) { _ = c.conn.Close() }},
		{"shutdown and exit", func(c *client) {
			c.mustCall(protocol.MethodShutdown, nil, nil)
			c.notify(protocol.MethodExit, nil)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			c := start(t, startOpts{open: fake.opener(nil, nil), inlineBudget: testBudget})
			c.initialize("/fake/run", false, nil)
			waitAnsweredOnLoop(t, c, fake)
			never := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel() // the client's call, whose answer never comes
			_, ended := slowOnLoop(t, ctx, c, fake, never)
			began := time.Now()
			tt.end(c)
			wantCancelled(t, ended)
			select {
			case err := <-c.done:
				c.done <- err // the harness's cleanup reads it too
			case <-time.After(waitTimeout):
				t.Fatal("Serve did not return")
			}
			if d := time.Since(began); d > 500*time.Millisecond {
				t.Errorf("Serve returned %v after the end: it waited for the loop", d)
			}
		})
	}
}

// TestResponseReadAsideReachesLoop: the client's answer to the server's own
// request, read beside a search being made on the loop, is routed as soon as
// that search ends, not once the client sends again: a masking change read
// aside reopens the index, whose progress asks the client first
// (window/workDoneProgress/create), and a search after it waits for that
// index.
func TestResponseReadAsideReachesLoop(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil), inlineBudget: testBudget})
	c.initialize("/fake/run", true, nil)
	waitAnsweredOnLoop(t, c, fake)
	release := make(chan struct{})
	slow, _ := slowOnLoop(t, context.Background(), c, fake, release)
	mark := c.mark()
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{"masking": lsp.MaskingHidingOutside}}})
	c.waitForAfter(mark, "the reopened index's progress asked for", method(protocol.MethodWorkDoneProgressCreate))
	fake.mu.Lock()
	fake.search = nil // the fake's answer
	fake.mu.Unlock()
	after := make(chan error, 1)
	go func() { after <- c.call(lsp.MethodRunSearch, map[string]any{"query": "after"}, nil) }()
	time.Sleep(50 * time.Millisecond) // read aside; it waits for the reopened index
	close(release)
	released := time.Now()
	if err := <-slow; err != nil {
		t.Fatalf("the slow search: %v", err)
	}
	if err := <-after; err != nil {
		t.Fatalf("the search after the masking change: %v", err)
	}
	if d := time.Since(released); d > 2*time.Second {
		t.Errorf("the search after the masking change was answered %v after the slow one ended: the client's answer to the progress waited (createTimeout)", d)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// wantCancelled waits for the end of slowOnLoop's search (ended), which
// must be its context's cancellation.
func wantCancelled(t *testing.T, ended <-chan error) {
	t.Helper()
	select {
	case err := <-ended:
		if err != context.Canceled {
			t.Errorf("the engine's search on the loop ended with %v, want context.Canceled", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the search on the loop was never cancelled")
	}
}
