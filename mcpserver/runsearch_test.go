package mcpserver_test

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"runls/lsp"
	"runls/mcpserver"
	"runls/retriever"
)

// TestSearchIsRunSearch: for the same request, search's structured content
// is the language server's run/search result field by field (spec §14):
// every item's location (as a path and a 1-based line), score, text, agent,
// episode, conversation, reading, time, level and matches, then hidden and
// the notices. A field run/search sends as null is absent from the tool's.
// Arguments given as "" are absent, in both.
func TestSearchIsRunSearch(t *testing.T) {
	root := sampleRun(t)
	cs := start(t, root, startOpts{})
	ls := startLSP(t, root)
	for _, args := range []map[string]any{
		{"query": "deploy database migration"}, // notes only: hidden noContext
		{"query": "deploy database migration", "episode": "episode-2", "conversation": "conv-1", "topK": 10},
		{"query": "hotel booking rooms", "episode": "episode-2", "conversation": "conv-1"},                                                          // otherConversation
		{"query": "deploy migration", "episode": "episode-1", "conversation": "conv-1", "topK": 20},                                                 // unfielded
		{"query": "deploy", "episode": "episode-2", "conversation": "conv-1", "scope": "episode", "topK": 20},                                       // scope
		{"query": "deploy", "agent": "BOB", "episode": "episode-9", "conversation": "conv-1"},                                                       // notices
		{"query": "deploy", "episode": "episode-2", "conversation": "conv-9"},                                                                       // notice
		{"query": "café crème", "episode": "episode-2", "conversation": "conv-1"},                                                                   // UTF-16 matches
		{"query": "deploy migration", "episode": "episode-2", "conversation": "conv-1", "from": "2026-10-21 18:00:30", "to": "2026-10-21 18:05:00"}, // a time window
		{"query": "deploy", "episode": "episode-2", "conversation": "conv-1", "scope": "", "agent": "", "turnMessage": ""},                          // "" is absent
	} {
		name, _ := json.Marshal(args)
		t.Run(string(name), func(t *testing.T) {
			res := call(t, cs, "search", args)
			if res.IsError {
				t.Fatalf("tool error: %s", text(res))
			}
			var got map[string]any
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			// The same request: the tool's default topK is not the server's.
			params := maps.Clone(args)
			if params["topK"] == nil {
				params["topK"] = mcpserver.DefaultTopK
			}
			var want retriever.Result
			ls.call(t, lsp.MethodRunSearch, params, &want)
			if want.Items == nil {
				want.Items = []retriever.Item{}
			}
			if want.Notices == nil {
				want.Notices = []retriever.Notice{}
			}
			if g, w := asJSON(t, got), asJSON(t, toolShape(t, root, want)); g != w {
				t.Errorf("search's structured content is not run/search's result:\n got %s\nwant %s", g, w)
			}
		})
	}
	// The cases test something: each field of §12 is met at least once.
	var seen struct{ hidden, notices, unfielded, other, scope, suggestion, level, conversation bool }
	for _, args := range []map[string]any{
		{"query": "deploy database migration"},
		{"query": "hotel booking rooms", "episode": "episode-2", "conversation": "conv-1"},
		{"query": "deploy migration", "episode": "episode-1", "conversation": "conv-1", "topK": 20},
		{"query": "deploy", "episode": "episode-2", "conversation": "conv-1", "scope": "episode", "topK": 20},
		{"query": "deploy", "agent": "BOB", "episode": "episode-9", "conversation": "conv-1"},
		{"query": "deploy database migration", "episode": "episode-2", "conversation": "conv-1", "topK": 10},
	} {
		var r retriever.Result
		ls.call(t, lsp.MethodRunSearch, args, &r)
		seen.hidden = seen.hidden || r.Hidden.NoContext > 0
		seen.other = seen.other || r.Hidden.OtherConversation > 0
		seen.unfielded = seen.unfielded || r.Hidden.Unfielded > 0
		seen.scope = seen.scope || r.Hidden.Scope > 0
		seen.notices = seen.notices || len(r.Notices) > 1
		for _, n := range r.Notices {
			seen.suggestion = seen.suggestion || n.Suggestion != nil
		}
		for _, it := range r.Items {
			seen.level = seen.level || it.Level != nil
			seen.conversation = seen.conversation || it.Conversation != nil
		}
	}
	if v := reflect.ValueOf(seen); !reflect.DeepEqual(seen, struct{ hidden, notices, unfielded, other, scope, suggestion, level, conversation bool }{true, true, true, true, true, true, true, true}) {
		t.Errorf("the cases miss a field: %+v", v)
	}
}

// toolShape is a run/search result as the search tool gives it: a location
// as {path, line}, nulls left out.
func toolShape(t *testing.T, root string, r retriever.Result) map[string]any {
	t.Helper()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal([]byte(asJSON(t, r)), &tree); err != nil {
		t.Fatal(err)
	}
	for i, it := range tree["items"].([]any) {
		item := it.(map[string]any)
		rel, err := filepath.Rel(real, uri.URI(r.Items[i].Location.URI).Filename())
		if err != nil {
			t.Fatal(err)
		}
		item["location"] = map[string]any{"path": filepath.ToSlash(rel), "line": r.Items[i].Location.Range.Start.Line + 1}
		dropNulls(item)
	}
	for _, n := range tree["notices"].([]any) {
		dropNulls(n.(map[string]any))
	}
	return tree
}

func dropNulls(m map[string]any) {
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
}

// asJSON is v as canonical JSON (keys sorted, numbers as JSON writes them).
func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	data, _ = json.Marshal(tree)
	return string(data)
}

// lspClient is an editor connected to the language server on a run.
type lspClient struct{ conn jsonrpc2.Conn }

// startLSP serves root with the language server in process and initializes it.
func startLSP(t *testing.T, root string) *lspClient {
	t.Helper()
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- lsp.Serve(context.Background(), a, lsp.Options{Version: "test"}) }()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	conn.Go(context.Background(), func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		return reply(ctx, nil, nil)
	})
	c := &lspClient{conn: conn}
	t.Cleanup(func() {
		_ = conn.Close()
		<-conn.Done()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the language server did not stop")
		}
	})
	c.call(t, "initialize", map[string]any{"processId": nil, "rootUri": retriever.FileURI(root), "capabilities": map[string]any{}}, nil)
	if err := conn.Notify(context.Background(), "initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	// Indexed before the first question, as the MCP side is (start): a
	// search answers from what is indexed once its grace has passed.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var info retriever.Info
		c.call(t, "run/info", map[string]any{}, &info)
		if info.Indexing.Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the language server did not index the run within 20 s")
		}
	}
	return c
}

func (c *lspClient) call(t *testing.T, method string, params, result any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.conn.Call(ctx, method, params, result); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}
