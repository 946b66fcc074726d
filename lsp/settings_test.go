package lsp_test

import (
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

func changeSettings(c *client, settings map[string]any) {
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": settings}})
}

// TestConfigurationChange: request settings apply to the next search without
// reopening; index settings reopen the index; bad values are refused by name.
func TestConfigurationChange(t *testing.T) {
	fake := newFake()
	var mu sync.Mutex
	var opened []retriever.Options
	c := start(t, startOpts{open: fake.opener(&opened, &mu)})
	c.initialize("/fake/run", false, map[string]any{"topK": 4, "maxDiagnosticsPerFile": 10})
	opens := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(opened)
	}
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil)
	if got := fake.lastRequest().TopK; got != 4 {
		t.Errorf("topK from initializationOptions: engine got %d", got)
	}
	if opens() != 1 {
		t.Fatalf("opened %+v", opened)
	}

	changeSettings(c, map[string]any{"topK": 9, "maxDiagnosticsPerFile": 10, "trace": map[string]any{"server": "verbose"}})
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil)
	if got := fake.lastRequest().TopK; got != 9 {
		t.Errorf("topK after the change: engine got %d", got)
	}
	if opens() != 1 {
		t.Errorf("a request setting reopened the index")
	}

	// What is shown of the diagnostics is the server's: the index stays.
	changeSettings(c, map[string]any{"topK": 9, "maxDiagnosticsPerFile": 2, "ignoreDiagnostics": []string{"unfielded-line"}})
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil)
	if opens() != 1 {
		t.Errorf("maxDiagnosticsPerFile reopened the index: %+v", opened)
	}
	changeSettings(c, map[string]any{"topK": 9, "masking": "hidingOutside"})
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil)
	if opens() != 2 {
		t.Errorf("masking did not reopen the index: %+v", opened)
	}

	// Bad values: named in one window/showMessage; the good ones apply.
	changeSettings(c, map[string]any{"topK": "many", "masking": "everything", "maxDiagnosticsPerFile": -1, "agent": "bob", "ignoreDiagnostics": []string{"nope"}})
	msg := c.waitFor("window/showMessage", method(protocol.MethodWindowShowMessage))
	for _, field := range []string{"topK", "masking", "maxDiagnosticsPerFile", "ignoreDiagnostics"} {
		if !strings.Contains(string(msg.params), field) {
			t.Errorf("message %s does not name %s", msg.params, field)
		}
	}
	// And each value given (a wrong type too).
	for _, value := range []string{`\"many\"`, "everything", "-1", "nope"} {
		if !strings.Contains(string(msg.params), value) {
			t.Errorf("message %s does not name the value %s", msg.params, value)
		}
	}
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil)
	if got := fake.lastRequest(); got.TopK != 9 || got.Agent != "bob" {
		t.Errorf("after bad settings the engine got %+v, want topK 9 kept and agent bob", got)
	}
	if opens() != 2 {
		t.Errorf("bad index settings reopened the index")
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestEngineWarningsReachClient: the engine's WARNs become window/logMessage.
func TestEngineWarningsReachClient(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	n := c.waitFor("window/logMessage", func(n note) bool {
		return n.method == protocol.MethodWindowLogMessage && !strings.Contains(string(n.params), "serving the run folder")
	})
	if !strings.Contains(string(n.params), "skipped a link to outside the run folder") || !strings.Contains(string(n.params), `"type":2`) {
		t.Errorf("logMessage = %s", n.params)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
