package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

type published struct {
	URI         string                `json:"uri"`
	Diagnostics []protocol.Diagnostic `json:"diagnostics"`
}

func (c *client) publishedFor(uri string, match func(published) bool) published {
	c.t.Helper()
	return c.publishedAfter(0, uri, match)
}

func (c *client) publishedAfter(mark int, uri string, match func(published) bool) published {
	c.t.Helper()
	n := c.waitForAfter(mark, "diagnostics of "+uri, func(n note) bool {
		if n.method != protocol.MethodTextDocumentPublishDiagnostics {
			return false
		}
		var p published
		return json.Unmarshal(n.params, &p) == nil && p.URI == uri && match(p)
	})
	var p published
	_ = json.Unmarshal(n.params, &p)
	return p
}

func count(k int) func(published) bool {
	return func(p published) bool { return len(p.Diagnostics) == k }
}

func TestDiagnosticsLifecycle(t *testing.T) {
	const (
		bad   = "/fake/run/episode-1/alice/chat.history"
		clean = "/fake/run/episode-1/alice/other.log"
	)
	warn := func(line int, code string) retriever.Diagnostic {
		return retriever.Diagnostic{Range: retriever.Range{Start: retriever.Position{Line: line}, End: retriever.Position{Line: line + 2, Character: 19}},
			Severity: retriever.SeverityWarning, Code: code, Message: code + " message"}
	}
	fake := newFake()
	fake.diags[bad] = []retriever.Diagnostic{warn(0, retriever.CodeUnfieldedLine)}
	fake.diags[clean] = nil
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)

	// Published after indexing, for the file that has some.
	p := c.publishedFor(retriever.FileURI(bad), count(1))
	d := p.Diagnostics[0]
	if d.Severity != protocol.DiagnosticSeverityWarning || d.Source != "runls" || d.Code != retriever.CodeUnfieldedLine ||
		d.Range.Start != (protocol.Position{Line: 0, Character: 0}) || d.Range.End != (protocol.Position{Line: 2, Character: 19}) {
		t.Errorf("diagnostic = %+v", d)
	}

	// Updated when the watcher reports a change.
	fake.change(bad, []retriever.Diagnostic{warn(0, retriever.CodeUnfieldedLine), warn(4, retriever.CodeUnindentedContinuation)})
	c.publishedFor(retriever.FileURI(bad), count(2))

	// Cleared when the file is fixed, and when it is deleted.
	fake.change(bad, []retriever.Diagnostic{})
	c.publishedFor(retriever.FileURI(bad), count(0))
	fake.change(bad, []retriever.Diagnostic{warn(1, retriever.CodeUnfieldedLine)})
	c.publishedFor(retriever.FileURI(bad), count(1))
	fake.change(bad, nil)
	cleared := c.sent(func(n note) bool {
		var p published
		return n.method == protocol.MethodTextDocumentPublishDiagnostics && json.Unmarshal(n.params, &p) == nil && p.URI == retriever.FileURI(bad) && len(p.Diagnostics) == 0
	})
	if len(cleared) < 1 {
		c.publishedFor(retriever.FileURI(bad), count(0))
	}

	// A clean file is not published at start, but gets its (empty) list when opened.
	if got := c.sent(func(n note) bool {
		var p published
		return json.Unmarshal(n.params, &p) == nil && p.URI == retriever.FileURI(clean)
	}); len(got) != 0 {
		t.Errorf("a clean file was published at start: %s", got[0].params)
	}
	c.notify(protocol.MethodTextDocumentDidOpen, map[string]any{"textDocument": map[string]any{
		"uri": retriever.FileURI(clean), "languageId": "log", "version": 1, "text": "",
	}})
	c.publishedFor(retriever.FileURI(clean), count(0))

	// Documents that are not files, or outside the run, are ignored.
	for _, u := range []string{"untitled:Untitled-1", "git:/fake/run/x?%7B%7D", "file:///elsewhere/x.log", "file://%zz"} {
		c.notify(protocol.MethodTextDocumentDidOpen, map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "log", "version": 1, "text": ""}})
		c.notify(protocol.MethodTextDocumentDidClose, map[string]any{"textDocument": map[string]any{"uri": u}})
	}
	var info map[string]any
	c.mustCall("run/info", map[string]any{}, &info) // still serving
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestDiagnosticsShownBySettings: maxDiagnosticsPerFile 0 publishes none
// (spec §9, revision 3), ignoreDiagnostics leaves codes out, and changing
// either publishes again without reopening the index.
func TestDiagnosticsShownBySettings(t *testing.T) {
	root := sampleRun(t)
	bob := retriever.FileURI(filepath.Join(root, "episode-2", "bob", "bob.log"))
	pre := retriever.FileURI(filepath.Join(root, "episode-1", "alice", "alice.history"))
	c := start(t, startOpts{})
	c.initialize(root, false, map[string]any{"maxDiagnosticsPerFile": 0})
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, nil)
	for _, n := range c.sent(method(protocol.MethodTextDocumentPublishDiagnostics)) {
		var p published
		if json.Unmarshal(n.params, &p) == nil && len(p.Diagnostics) > 0 {
			t.Errorf("cap 0 published %d diagnostics for %s", len(p.Diagnostics), p.URI)
		}
	}
	m := c.mark()
	changeSettings(c, map[string]any{"ignoreDiagnostics": []string{retriever.CodeUnfieldedLine}})
	if p := c.publishedAfter(m, bob, func(p published) bool { return len(p.Diagnostics) > 0 }); hasCode(p, retriever.CodeUnfieldedLine) {
		t.Errorf("bob.log: %+v holds a code left out", p.Diagnostics)
	}
	m = c.mark()
	changeSettings(c, map[string]any{"ignoreDiagnostics": []string{retriever.CodeUnindentedContinuation}})
	c.publishedAfter(m, bob, count(0)) // its only warning is a stack trace's
	c.publishedAfter(m, pre, count(1))
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func hasCode(p published, code string) bool {
	for _, d := range p.Diagnostics {
		if d.Code == code {
			return true
		}
	}
	return false
}

// TestPublishAllLetsRequestsGoFirst: the diagnostics of every record file,
// published once an index is ready, wait while a request is being answered
// (at 1 GB they are some second of CPU, which a reopen's first answer
// needed, issue 33): a search in flight as the index becomes ready is
// answered before any of them is published, and they are published after.
func TestPublishAllLetsRequestsGoFirst(t *testing.T) {
	fake := newFake()
	fake.refreshGate = make(chan struct{})
	path := "/fake/run/episode-1/a/a.history"
	fake.diags[path] = []retriever.Diagnostic{{Severity: retriever.SeverityWarning, Code: retriever.CodeUnfieldedLine, Message: "unfielded"}}
	release := make(chan struct{})
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		<-release
		return retriever.Result{}, nil
	}
	c := start(t, startOpts{open: func(context.Context, retriever.Options) (lsp.Engine, error) { return fake, nil }})
	c.initialize("/fake/run", false, nil)
	answered := make(chan error, 1)
	go func() {
		var res json.RawMessage
		answered <- c.call(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, &res)
	}()
	time.Sleep(200 * time.Millisecond) // the search is in flight
	close(fake.refreshGate)
	time.Sleep(300 * time.Millisecond)
	if n := len(c.sent(method(protocol.MethodTextDocumentPublishDiagnostics))); n != 0 {
		t.Fatalf("%d diagnostics published while a search was being answered", n)
	}
	close(release)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the search was not answered")
	}
	c.publishedFor(retriever.FileURI(path), count(1))
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestDiagnosticsStopAtShutdown: the diagnostics of every record file,
// published once the index is ready, stop when the server shuts down (at
// most the file under way is finished), and the exit does not wait for
// the rest.
func TestDiagnosticsStopAtShutdown(t *testing.T) {
	const files = 400
	fake := newFake()
	for i := range files {
		fake.diags[fmt.Sprintf("/fake/run/episode-1/a%d/chat.history", i)] = []retriever.Diagnostic{{
			Severity: retriever.SeverityWarning, Code: retriever.CodeUnfieldedLine, Message: "m"}}
	}
	var mu sync.Mutex
	calls, afterShutdown, shut := 0, 0, false
	started := make(chan struct{})
	fake.onDiags = func(string) {
		mu.Lock()
		calls++
		if shut {
			afterShutdown++
		}
		if calls == 3 {
			close(started)
		}
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // a file's diagnostics take time
	}
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("no diagnostics were published")
	}
	c.mustCall(protocol.MethodShutdown, nil, nil)
	mu.Lock()
	shut = true
	mu.Unlock()
	c.notify(protocol.MethodExit, nil)
	if err := c.serveResult(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	time.Sleep(50 * time.Millisecond) // a publishing left running would call on
	mu.Lock()
	defer mu.Unlock()
	if afterShutdown > 1 || calls == files {
		t.Errorf("%d of %d files' diagnostics made after shutdown was answered (%d in all), want at most 1", afterShutdown, files, calls)
	}
}

// TestDiagnosticsWaitForSearches: diagnostics published for every file (here
// after a settings change, as after an index) wait while a request is being
// answered and for requestQuiet after its answer, so that a person's
// searches are not queued behind them; then they come.
func TestDiagnosticsWaitForSearches(t *testing.T) {
	const file = "/fake/run/episode-1/alice/chat.history"
	fake := newFake()
	fake.diags[file] = []retriever.Diagnostic{{Range: retriever.Range{End: retriever.Position{Line: 1}},
		Severity: retriever.SeverityWarning, Code: retriever.CodeUnfieldedLine, Message: "m"}}
	var (
		mu       sync.Mutex
		asked    []time.Time // Diagnostics calls
		answered time.Time   // the held search's end
	)
	fake.onDiags = func(string) {
		mu.Lock()
		asked = append(asked, time.Now())
		mu.Unlock()
	}
	entered, hold := make(chan struct{}), make(chan struct{})
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		close(entered)
		<-hold
		mu.Lock()
		answered = time.Now()
		mu.Unlock()
		return retriever.Result{}, nil
	}
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	c.publishedFor(retriever.FileURI(file), count(1))

	searched := make(chan error, 1)
	go func() { searched <- c.call("run/search", map[string]any{"query": "x"}, nil) }()
	<-entered
	mu.Lock()
	before := len(asked)
	mu.Unlock()
	mark := c.mark()
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{"maxDiagnosticsPerFile": 3}}})
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	during := len(asked) - before
	mu.Unlock()
	if during != 0 {
		t.Fatalf("the diagnostics were made %d times while a search was being answered", during)
	}
	close(hold)
	if err := <-searched; err != nil {
		t.Fatal(err)
	}
	c.publishedAfter(mark, retriever.FileURI(file), count(1))
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == before {
		t.Fatal("published without making the diagnostics")
	}
	// A pause of requestQuiet (50 ms) is the person's searching ending.
	if first := asked[before]; first.Sub(answered) < 50*time.Millisecond {
		t.Errorf("the diagnostics were made %v after the search's answer, want at least 50ms", first.Sub(answered))
	}
}

// TestWatchingBesideThePublishing: the run is watched while the
// diagnostics of a fresh index are still being published (they take seconds
// at 1 GB): until it is, every search walks the whole run.
func TestWatchingBesideThePublishing(t *testing.T) {
	const file = "/fake/run/episode-1/alice/chat.history"
	fake := newFake()
	fake.diags[file] = []retriever.Diagnostic{{Range: retriever.Range{End: retriever.Position{Line: 1}},
		Severity: retriever.SeverityWarning, Code: retriever.CodeUnfieldedLine, Message: "m"}}
	hold := make(chan struct{})
	var once sync.Once
	fake.onDiags = func(string) { once.Do(func() { <-hold }) }
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	select {
	case <-fake.watching:
	case <-time.After(waitTimeout):
		t.Fatal("the run was not watched while the diagnostics were being made")
	}
	close(hold)
	c.publishedFor(retriever.FileURI(file), count(1))
}

// TestDiagnosticsAfterAPanic: a panic while a file's diagnostics are made
// is logged, and the rest goes on: a change reported afterwards is
// published (the lock the publishing holds is not left held).
func TestDiagnosticsAfterAPanic(t *testing.T) {
	const bad, other = "/fake/run/episode-1/alice/chat.history", "/fake/run/episode-1/bob/chat.history"
	fake := newFake()
	warn := []retriever.Diagnostic{{Range: retriever.Range{End: retriever.Position{Line: 1}},
		Severity: retriever.SeverityWarning, Code: retriever.CodeUnfieldedLine, Message: "m"}}
	fake.diags[bad] = warn
	var once sync.Once
	panicking := make(chan struct{})
	fake.onDiags = func(path string) {
		if path == bad {
			once.Do(func() {
				close(panicking)
				panic("diagnostics failed")
			})
		}
	}
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	<-panicking
	time.Sleep(20 * time.Millisecond) // the panic unwinds the publishing
	fake.change(other, warn)
	c.publishedFor(retriever.FileURI(other), count(1))
}

// The engine's idle merges (Engine.MergeIdle) wait for the server to be
// idle after its first index: not while a search is being answered,
// however long it takes; not while requests keep coming closer together
// than the pause; once, after they pause.
func TestMergeIdleWaitsForRequests(t *testing.T) {
	const quiet = time.Second
	fake := newFake()
	fake.mergedIdle = make(chan time.Time, 4)
	entered, hold := make(chan struct{}), make(chan struct{})
	var once, released sync.Once
	release := func() { released.Do(func() { close(hold) }) }
	t.Cleanup(release) // a failure leaves no handler held
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		if req.Query == "held" {
			once.Do(func() { close(entered) })
			<-hold
		}
		return retriever.Result{}, nil
	}
	c := start(t, startOpts{open: fake.opener(nil, nil), idleMerge: quiet})
	c.initialize("/fake/run", false, nil)
	searched := make(chan error, 1)
	go func() { searched <- c.call("run/search", map[string]any{"query": "held"}, nil) }()
	<-entered
	noMerge := func(while string) {
		t.Helper()
		select {
		case <-fake.mergedIdle:
			t.Fatalf("the idle merges began %s", while)
		default:
		}
	}
	time.Sleep(2 * quiet)
	noMerge("while a search was being answered")
	release()
	if err := <-searched; err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for end := time.Now().Add(2 * quiet); time.Now().Before(end); {
		if err := c.call("run/search", map[string]any{"query": "x"}, nil); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
		noMerge("while requests kept coming")
		time.Sleep(quiet / 20)
	}
	select {
	case at := <-fake.mergedIdle:
		if gap := at.Sub(last); gap < quiet {
			t.Fatalf("the idle merges began %v after the last answer, want %v at least", gap, quiet)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no idle merges after the requests paused")
	}
	time.Sleep(2 * quiet)
	noMerge("twice")
}
