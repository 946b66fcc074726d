package lsp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

// TestRunSearchDefaults: fields absent from the params (or "") take the
// settings' values; given fields win.
func TestRunSearchDefaults(t *testing.T) {
	settings := map[string]any{"agent": "alice", "episode": "episode-2", "conversation": "conv-1", "scope": "episode", "topK": 3}
	tests := []struct {
		name   string
		params map[string]any
		want   retriever.Request
	}{
		{"all from settings", map[string]any{"query": "q"},
			retriever.Request{Query: "q", Agent: "alice", Episode: "episode-2", Conversation: "conv-1", Scope: "episode", TopK: 3}},
		{"empty strings are absent", map[string]any{"turnMessage": "t", "agent": "", "episode": "", "scope": ""},
			retriever.Request{TurnMessage: "t", Agent: "alice", Episode: "episode-2", Conversation: "conv-1", Scope: "episode", TopK: 3}},
		{"null is absent", map[string]any{"query": "q", "agent": nil, "topK": nil},
			retriever.Request{Query: "q", Agent: "alice", Episode: "episode-2", Conversation: "conv-1", Scope: "episode", TopK: 3}},
		{"params win", map[string]any{"query": "q", "agent": "bob", "episode": "episode-10", "conversation": "c9", "scope": "run", "topK": 50},
			retriever.Request{Query: "q", Agent: "bob", Episode: "episode-10", Conversation: "c9", Scope: "run", TopK: 50}},
		{"from and to reach the engine", map[string]any{"query": "q", "from": "2026-10-21 18:00:00", "to": ""},
			retriever.Request{Query: "q", Agent: "alice", Episode: "episode-2", Conversation: "conv-1", Scope: "episode", TopK: 3, From: "2026-10-21 18:00:00"}},
	}
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, settings)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res retriever.Result
			c.mustCall(lsp.MethodRunSearch, tt.params, &res)
			if got := fake.lastRequest(); got != tt.want {
				t.Errorf("engine got %+v, want %+v", got, tt.want)
			}
			if len(res.Items) != 1 || res.Items[0].Text != "echo "+tt.want.Query {
				t.Errorf("result %+v is not the engine's", res)
			}
		})
	}
	// With no settings, a search has no defaults.
	c.notify(protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"runls": map[string]any{}}})
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, nil)
	if got := fake.lastRequest(); got != (retriever.Request{Query: "q"}) {
		t.Errorf("after clearing the settings the engine got %+v", got)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestRunSearchInvalidParams: -32602 naming the field; the engine is not asked.
func TestRunSearchInvalidParams(t *testing.T) {
	tests := []struct {
		name, params, field string
	}{
		{"topK of the wrong type", `{"query":"q","topK":"5"}`, "topK"},
		{"topK not an integer", `{"query":"q","topK":2.5}`, "topK"},
		{"topK zero", `{"query":"q","topK":0}`, "topK"},
		{"agent of the wrong type", `{"query":"q","agent":7}`, "agent"},
		{"episode of the wrong type", `{"query":"q","episode":["episode-1"]}`, "episode"},
		{"from not a time", `{"query":"q","from":"18:00"}`, "from"},
		{"to before from", `{"query":"q","from":"2026-10-21 18:00:01","to":"2026-10-21 18:00:00"}`, "to"},
		{"params an array", `["q"]`, "params"},
		{"params a string", `"q"`, "params"},
	}
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.call(lsp.MethodRunSearch, rawJSON(tt.params), nil)
			if codeOf(err) != jsonrpc2.InvalidParams {
				t.Fatalf("run/search %s = %v, want code -32602", tt.params, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %s", err, tt.field)
			}
		})
	}
	fake.mu.Lock()
	n := len(fake.requests)
	fake.mu.Unlock()
	if n != 0 {
		t.Errorf("the engine was asked %d times", n)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestRunSearchBytesAreEncodingJSON: the server writes run/search's answer
// as the engine's appended JSON (retriever.Result.EncodedJSON), byte for
// byte what encoding/json makes of it: texts with what JSON escapes, every
// optional field, hidden counts and notices.
func TestRunSearchBytesAreEncodingJSON(t *testing.T) {
	conv, tm, level, sugg := "conv-1", "2026-12-07 10:00:00", "WARN", "coder"
	want := retriever.Result{
		Items: []retriever.Item{{
			Location: retriever.Location{URI: "file:///fake/run/episode-1/a/a.log", Range: retriever.Range{Start: retriever.Position{Line: 2, Character: 4}, End: retriever.Position{Line: 2, Character: 30}}},
			Score:    3.0000000000000004, Text: "a <tag> & \"quote\" \u2028 \x7f \xff", Agent: "a", Episode: "episode-1", Conversation: &conv,
			Reading: retriever.ReadingSaid, Time: &tm, Level: &level, Matches: [][2]int{{0, 1}},
		}, {Score: 1e-7, Text: "second", Reading: retriever.ReadingNote}},
		Hidden:  retriever.Hidden{NoContext: 2, OtherConversation: 1},
		Notices: []retriever.Notice{{Field: "agent", Value: "Coder", Message: "no agent", Suggestion: &sugg}},
	}
	fake := newFake()
	fake.search = func(context.Context, retriever.Request) (retriever.Result, error) { return want, nil }
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	var raw json.RawMessage
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "q"}, &raw)
	enc, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(enc) {
		t.Errorf("the server's bytes\n%s\nencoding/json's\n%s", raw, enc)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
