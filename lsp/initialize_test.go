package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/lsp"
)

func TestInitializeCapabilities(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	result := c.initialize("/fake/run", true, nil)
	indented, _ := json.MarshalIndent(result, "", "  ")
	golden(t, "initialize/result.json", append(indented, '\n'))
	got := mustJSON(result["capabilities"])
	for _, want := range []string{
		`"textDocumentSync":{"openClose":true}`,
		`"workspaceSymbolProvider":{"workDoneProgress":true}`,
		`"documentSymbolProvider":{"label":"runls records"}`,
		`"foldingRangeProvider":true`,
		`"hoverProvider":true`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("capabilities %s lack %s", got, want)
		}
	}
	for _, absent := range []string{"completionProvider", "definitionProvider", "referencesProvider"} {
		if strings.Contains(got, absent) {
			t.Errorf("capabilities %s claim %s, which is not served", got, absent)
		}
	}
	if name := mustJSON(result["serverInfo"]); !strings.Contains(name, `"name":"runls"`) {
		t.Errorf("serverInfo = %s", name)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve after shutdown and exit = %v, want nil", err)
	}
}

func TestLifecycle(t *testing.T) {
	tests := []struct {
		name string
		run  func(c *client)
		want error
	}{
		{"shutdown then exit", func(c *client) {
			c.initialize("/fake/run", false, nil)
			c.mustCall(protocol.MethodShutdown, nil, nil)
			c.notify(protocol.MethodExit, nil)
		}, nil},
		{"shutdown with null params then exit", func(c *client) {
			c.initialize("/fake/run", false, nil)
			c.mustCall(protocol.MethodShutdown, json.RawMessage("null"), nil)
			c.notify(protocol.MethodExit, json.RawMessage("null"))
		}, nil},
		{"exit without shutdown", func(c *client) {
			c.initialize("/fake/run", false, nil)
			c.notify(protocol.MethodExit, nil)
		}, lsp.ErrExitWithoutShutdown},
		{"exit before initialize", func(c *client) {
			c.notify(protocol.MethodExit, nil)
		}, lsp.ErrExitWithoutShutdown},
		{"connection closed without shutdown", func(c *client) {
			c.initialize("/fake/run", false, nil)
			_ = c.conn.Close()
		}, lsp.ErrExitWithoutShutdown},
		{"connection closed after shutdown", func(c *client) {
			c.initialize("/fake/run", false, nil)
			c.mustCall(protocol.MethodShutdown, nil, nil)
			_ = c.conn.Close()
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, startOpts{open: newFake().opener(nil, nil)})
			tt.run(c)
			if err := c.serveResult(); !errors.Is(err, tt.want) {
				t.Errorf("Serve = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRefusedRequests(t *testing.T) {
	c := start(t, startOpts{open: newFake().opener(nil, nil)})
	// Before initialize: requests get ServerNotInitialized, notifications are dropped.
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{"topK": 7}}})
	for _, m := range []string{lsp.MethodRunSearch, lsp.MethodRunInfo, protocol.MethodWorkspaceSymbol} {
		err := c.call(m, map[string]any{}, nil)
		if codeOf(err) != jsonrpc2.ServerNotInitialized {
			t.Errorf("%s before initialize: %v (code %d), want code -32002", m, err, codeOf(err))
		}
	}
	c.initialize("/fake/run", false, nil)
	if err := c.call(protocol.MethodInitialize, map[string]any{}, nil); codeOf(err) != jsonrpc2.InvalidRequest {
		t.Errorf("second initialize: %v, want code -32600", err)
	}
	c.mustCall(protocol.MethodShutdown, nil, nil)
	if err := c.call(lsp.MethodRunInfo, map[string]any{}, nil); codeOf(err) != jsonrpc2.InvalidRequest {
		t.Errorf("request after shutdown: %v, want code -32600", err)
	}
	c.notify(protocol.MethodExit, nil)
	if err := c.serveResult(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestNotARunFolder(t *testing.T) {
	tests := []struct {
		name    string
		root    string
		params  map[string]any
		notRun  bool
		wantMsg string
	}{
		{name: "no episode folder", root: "/fake/run", notRun: true, wantMsg: "not a run folder"},
		{name: "no workspace", wantMsg: "no workspace folder"},
		{name: "not a file URI", params: map[string]any{"rootUri": "untitled:Untitled-1"}, wantMsg: "not a local folder"},
		{name: "first workspace folder not a file URI", params: map[string]any{
			"workspaceFolders": []map[string]any{{"uri": "vscode-vfs://github/x/y", "name": "y"}},
		}, wantMsg: "not a local folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			fake.notRun = tt.notRun
			c := start(t, startOpts{open: fake.opener(nil, nil)})
			if tt.params != nil {
				p := map[string]any{"processId": nil, "capabilities": map[string]any{}}
				for k, v := range tt.params {
					p[k] = v
				}
				c.mustCall(protocol.MethodInitialize, p, nil)
				c.notify(protocol.MethodInitialized, map[string]any{})
			} else {
				c.initialize(tt.root, false, nil)
			}
			msg := c.waitFor("window/showMessage", method(protocol.MethodWindowShowMessage))
			if !strings.Contains(string(msg.params), tt.wantMsg) {
				t.Errorf("showMessage %s does not say %q", msg.params, tt.wantMsg)
			}
			var res struct {
				Items []any `json:"items"`
			}
			c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "anything"}, &res)
			if res.Items == nil || len(res.Items) != 0 {
				t.Errorf("run/search = %+v, want an empty list", res)
			}
			var syms []any
			c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "anything"}, &syms)
			if syms == nil || len(syms) != 0 {
				t.Errorf("workspace/symbol = %v, want []", syms)
			}
			var info map[string]any
			c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
			if got := mustJSON(info["episodes"]); got != "[]" {
				t.Errorf("run/info episodes = %s, want []", got)
			}
			// A configuration change does not show the message again.
			c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{"maxDiagnosticsPerFile": 3}}})
			c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
			if n := len(c.sent(method(protocol.MethodWindowShowMessage))); n != 1 {
				t.Errorf("showMessage sent %d times, want once", n)
			}
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
}

// protocol.WithLogger and protocol.WithClient share a context key in
// go.lsp.dev/protocol v0.12.0. This test pins the trap: if it starts failing,
// the package fixed it. The server keeps both out of contexts (see newServer).
func TestProtocolContextKeyCollision(t *testing.T) {
	logger := zap.NewExample()
	ctx := protocol.WithLogger(context.Background(), logger)
	ctx = protocol.WithClient(ctx, nil)
	if protocol.LoggerFromContext(ctx) == logger {
		t.Fatalf("the logger survived WithClient: go.lsp.dev/protocol no longer shares the key")
	}
}

// TestWithoutInitialized: a client that never sends initialized is served
// all the same (the first request starts indexing).
func TestWithoutInitialized(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.mustCall(protocol.MethodInitialize, map[string]any{"processId": nil, "rootUri": "file:///fake/run", "capabilities": map[string]any{}}, nil)
	var res struct {
		Items []json.RawMessage `json:"items"`
	}
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, &res)
	if len(res.Items) != 1 {
		t.Errorf("run/search without initialized = %d items, want the engine's 1", len(res.Items))
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
