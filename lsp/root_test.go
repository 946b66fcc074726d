package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

// TestRootThroughLink: a run folder the client opens through a symbolic
// link is answered in the client's naming: every location of run/search,
// run/records, run/failures and workspace/symbol, every published
// diagnostic and run/info's root lie under the folder the client opened,
// none under the link's target; documentSymbol and hover take the client's
// URIs.
func TestRootThroughLink(t *testing.T) {
	real := sampleRun(t)
	link := filepath.Join(t.TempDir(), "run-link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	c := start(t, startOpts{})
	c.initialize(link, false, nil)
	c.waitIndexed()
	under := retriever.FileURI(link) + "/"
	outside := retriever.FileURI(real)

	var info struct{ Root string }
	var search, records, failures, symbols json.RawMessage
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy migration", "episode": "episode-2", "conversation": "conv-1", "topK": 20}, &search)
	c.mustCall(lsp.MethodRunRecords, map[string]any{"episode": "episode-2"}, &records)
	c.mustCall(lsp.MethodRunFailures, map[string]any{"minLevel": "WARN"}, &failures)
	c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, &symbols)
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
	if info.Root != retriever.FileURI(link) {
		t.Errorf("run/info root %s, want %s", info.Root, retriever.FileURI(link))
	}
	for name, raw := range map[string]json.RawMessage{"run/search": search, "run/records": records, "run/failures": failures, "workspace/symbol": symbols} {
		uris := urisIn(t, raw)
		if len(uris) == 0 {
			t.Errorf("%s: no location: the case tests nothing", name)
		}
		for _, u := range uris {
			if !strings.HasPrefix(u, under) {
				t.Errorf("%s: location %s outside the workspace folder %s", name, u, under)
			}
		}
	}
	c.waitFor("diagnostics", method(protocol.MethodTextDocumentPublishDiagnostics))
	for _, n := range c.sent(method(protocol.MethodTextDocumentPublishDiagnostics)) {
		var p struct{ URI string }
		_ = json.Unmarshal(n.params, &p)
		if !strings.HasPrefix(p.URI, under) {
			t.Errorf("diagnostics of %s, outside the workspace folder", p.URI)
		}
	}
	if strings.Contains(c.methods(), outside+"/") {
		t.Errorf("the server named the link's target:\n%s", c.methods())
	}
	path := filepath.Join(link, "episode-2", "bob", "bob.log")
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &syms)
	var h protocol.Hover
	c.mustCall(protocol.MethodTextDocumentHover, hoverParams(path, 2), &h)
	if len(syms) == 0 || !strings.Contains(h.Contents.Value, "evidence") {
		t.Errorf("documentSymbol %d symbols, hover %q through the link", len(syms), h.Contents.Value)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// urisIn lists every "uri" string in a JSON answer.
func urisIn(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "uri" {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(tree)
	return out
}

// TestRootFound: a workspace folder inside a run (an episode or an agent
// folder) or holding exactly one run is served as that run, and the server
// says which folder it serves (window/logMessage, run/info's root); a
// folder holding two runs is not a run folder.
func TestRootFound(t *testing.T) {
	run := sampleRun(t) // <tmp>/run
	parent := filepath.Dir(run)
	if err := os.Mkdir(filepath.Join(parent, "not-a-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, workspace, want, said string
	}{
		{"the run", run, run, "serving the run folder " + run},
		{"an episode folder", filepath.Join(run, "episode-2"), run, "is inside it"},
		{"an agent folder", filepath.Join(run, "episode-2", "alice"), run, "is inside it"},
		{"below an agent folder", filepath.Join(run, "episode-2", "alice", "scratch"), run, "is inside it"},
		{"a folder of one run", parent, run, "the one run in the workspace folder " + parent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, startOpts{})
			c.initialize(tt.workspace, false, nil)
			c.waitFor("the folder served", func(n note) bool {
				return n.method == protocol.MethodWindowLogMessage && strings.Contains(string(n.params), "serving the run folder "+tt.want) &&
					strings.Contains(string(n.params), tt.said)
			})
			c.waitIndexed()
			var info struct{ Root string }
			c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
			if info.Root != retriever.FileURI(tt.want) {
				t.Errorf("run/info root %s, want %s", info.Root, retriever.FileURI(tt.want))
			}
			var res retriever.Result
			c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy", "episode": "episode-2", "conversation": "conv-1"}, &res)
			if len(res.Items) == 0 || !strings.HasPrefix(res.Items[0].Location.URI, retriever.FileURI(tt.want)+"/") {
				t.Errorf("run/search %s", mustJSON(res.Items))
			}
			path := filepath.Join(tt.want, "episode-2", "bob", "bob.log")
			var syms []protocol.DocumentSymbol
			c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &syms)
			if len(syms) == 0 {
				t.Errorf("no outline of %s", path)
			}
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
	// Two runs side by side: none is chosen.
	if err := os.Symlink(run, filepath.Join(parent, "second")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	second := filepath.Join(parent, "second-run")
	if err := os.MkdirAll(filepath.Join(second, "episode-1", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := start(t, startOpts{})
	c.initialize(parent, false, nil)
	c.waitFor("why nothing is served", func(n note) bool {
		return n.method == protocol.MethodWindowShowMessage && strings.Contains(string(n.params), "not a run folder")
	})
	if strings.Contains(c.methods(), "serving the run folder") {
		t.Errorf("the server says it serves a folder that is no run:\n%s", c.methods())
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
