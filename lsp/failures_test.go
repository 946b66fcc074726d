package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"runls/lsp"
	"runls/masking"
	"runls/retriever"
)

// TestRunFailuresReal: run/failures through the server answers what the
// engine answers; the settings give it no defaults; with masking on, its
// patterns are masked.
func TestRunFailuresReal(t *testing.T) {
	root := sampleRun(t)
	secret := "2026-10-21 18:20:00.000 ERROR [running] [conv-1] Bob login failed with password=hunter2hunter2\n"
	f, err := os.OpenFile(filepath.Join(root, "episode-2", "bob", "bob.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(secret); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, mask := range []bool{false, true} {
		c := start(t, startOpts{})
		settings := map[string]any{"episode": "episode-3", "agent": "carol"}
		opts := retriever.Options{Root: root}
		if mask {
			settings["masking"] = lsp.MaskingHidingOutside
			real, _ := filepath.EvalSymlinks(root)
			opts.Masker = masking.HidingOutside(real)
		}
		c.initialize(root, false, settings)
		ix := openIndex(t, opts)
		for _, params := range []map[string]any{
			{},
			{"episode": "episode-2", "agent": nil, "minLevel": ""},
			{"minLevel": "WARN", "agent": "bob"},
			{"maxRecords": 0},
			{"maxRecords": 1, "minLevel": "WARN", "pattern": nil},
			{"pattern": "migration dry-run failed"},
			{"pattern": "could not fetch the CI logs", "maxRecords": 100, "agent": "bob"},
		} {
			var got lsp.FailuresResult
			c.mustCall(lsp.MethodRunFailures, params, &got)
			req := retriever.FailuresRequest{}
			if v, ok := params["episode"].(string); ok {
				req.Episode = v
			}
			if v, ok := params["agent"].(string); ok {
				req.Agent = v
			}
			if v, ok := params["minLevel"].(string); ok {
				req.MinLevel = v
			}
			if v, ok := params["maxRecords"].(int); ok {
				req.MaxRecords = &v
			}
			if v, ok := params["pattern"].(string); ok {
				req.Pattern = v
			}
			want, err := ix.Failures(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if canonical(t, got) != canonical(t, want) {
				t.Errorf("mask %v, %v: server\n%s\nengine\n%s", mask, params, canonical(t, got), canonical(t, want))
			}
			// The server sends the engine's JSON as it is (a preEncoded result).
			var raw json.RawMessage
			c.mustCall(lsp.MethodRunFailures, params, &raw)
			if string(raw) != string(want.EncodedJSON()) {
				t.Errorf("mask %v, %v: the server's bytes\n%s\nthe engine's\n%s", mask, params, raw, want.EncodedJSON())
			}
			if len(want.Groups) == 0 {
				t.Errorf("%v: no groups: the comparison says little", params)
			}
			text := canonical(t, got)
			if _, all := params["episode"]; all && mask == strings.Contains(text, "password=hunter") {
				t.Errorf("mask %v: the password is in the answer: %v", mask, !mask)
			}
		}
		if err := c.shutdownExit(); err != nil {
			t.Errorf("Serve = %v", err)
		}
	}
}

// TestRunFailuresInvalidParams: -32602 naming the field.
func TestRunFailuresInvalidParams(t *testing.T) {
	c := start(t, startOpts{})
	c.initialize(sampleRun(t), false, nil)
	for params, field := range map[string]string{
		`{"episode":"ep-2"}`:   "episode",
		`{"agent":"../x"}`:     "agent",
		`{"minLevel":"FATAL"}`: "minLevel",
		`{"minLevel":3}`:       "minLevel",
		`["episode-2"]`:        "params",
		`{"maxRecords":-1}`:    "maxRecords",
		`{"maxRecords":101}`:   "maxRecords",
		`{"maxRecords":2.5}`:   "maxRecords",
		`{"maxRecords":"5"}`:   "maxRecords",
		`{"pattern":7}`:        "pattern",
	} {
		err := c.call(lsp.MethodRunFailures, rawJSON(params), nil)
		if codeOf(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), field) {
			t.Errorf("run/failures %s = %v, want -32602 naming %s", params, err, field)
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// failuresFake counts the engine's run/failures.
type failuresFake struct {
	*fakeEngine
	asked atomic.Int32
}

func (e *failuresFake) Failures(ctx context.Context, req retriever.FailuresRequest) (retriever.FailuresResult, error) {
	e.asked.Add(1)
	return e.fakeEngine.Failures(ctx, req)
}

// TestRunFailuresWaitsForIndexing: while the first index is built,
// run/failures waits for it (its answer has no place for §12's indexing
// notice, and counts made of part of the run would read as the run's): the
// engine is asked once the first index is built, however long that takes.
func TestRunFailuresWaitsForIndexing(t *testing.T) {
	fake := &failuresFake{fakeEngine: newFake()}
	fake.refreshGate = make(chan struct{})
	c := start(t, startOpts{open: func(context.Context, retriever.Options) (lsp.Engine, error) { return fake, nil }})
	c.initialize("/fake/run", false, nil)
	answered := make(chan error, 1)
	var got lsp.FailuresResult
	go func() { answered <- c.call(lsp.MethodRunFailures, map[string]any{"maxRecords": 0}, &got) }()
	select {
	case err := <-answered:
		t.Fatalf("run/failures answered (%v) while the first index was held", err)
	case <-time.After(2 * time.Second):
	}
	if n := fake.asked.Load(); n != 0 {
		t.Fatalf("the engine was asked %d times while indexing", n)
	}
	close(fake.refreshGate)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("run/failures did not answer once indexed")
	}
	if n := fake.asked.Load(); n != 1 || got.Groups == nil {
		t.Errorf("once indexed: asked %d times, answer %+v; want one ask and its answer", n, got)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestRunFailuresThroughLink: through a linked run folder, concurrent
// run/failures (the list, a group, the whole answer, as an editor sends them
// at once) all name the folder as the client does, and asked again, still
// do: the engine's answer, kept and shared between requests, is mapped in a
// copy (go test -race).
func TestRunFailuresThroughLink(t *testing.T) {
	real := sampleRun(t)
	link := filepath.Join(t.TempDir(), "run-link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	c := start(t, startOpts{})
	c.initialize(link, false, nil)
	under := retriever.FileURI(link) + "/"
	params := []map[string]any{{}, {"maxRecords": 0}, {"pattern": "migration dry-run failed"}, {"maxRecords": 1}, {}}
	for round := range 3 {
		answers := make([]json.RawMessage, len(params))
		errs := make(chan error, len(params))
		for i, p := range params {
			go func() { errs <- c.call(lsp.MethodRunFailures, p, &answers[i]) }()
		}
		for range params {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		for i, raw := range answers {
			uris := urisIn(t, raw)
			if len(uris) == 0 && params[i]["maxRecords"] != 0 {
				t.Errorf("round %d, %v: no location: the case tests nothing", round, params[i])
			}
			for _, u := range uris {
				if !strings.HasPrefix(u, under) {
					t.Errorf("round %d, %v: location %s outside the workspace folder %s", round, params[i], u, under)
				}
			}
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
