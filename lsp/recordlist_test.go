package lsp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"runls/lsp"
	"runls/retriever"
)

// TestRunRecordsReal: run/records through the server answers what the
// engine answers, page by page, and its wire form is kept in a golden file
// (go test -run RunRecordsReal -update).
func TestRunRecordsReal(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	// The settings give run/records no defaults.
	c.initialize(root, false, map[string]any{"episode": "episode-3", "conversation": "conv-2", "agent": "carol"})
	ix := openIndex(t, retriever.Options{Root: root})
	for _, params := range []map[string]any{
		{"episode": "episode-2", "conversation": "conv-1"},
		{"episode": "episode-2", "conversation": "-", "agent": nil, "minLevel": ""},
		{"episode": "episode-2", "agent": "bob", "minLevel": "WARN", "from": "2026-10-21 18:00:00", "to": "2026-10-21 18:06:00"},
		{"episode": "episode-1"},
	} {
		var got lsp.RecordsResult
		c.mustCall(lsp.MethodRunRecords, params, &got)
		var req retriever.RecordsRequest
		data, _ := json.Marshal(params)
		if err := json.Unmarshal(data, &req); err != nil {
			t.Fatal(err)
		}
		want, err := ix.Records(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if canonical(t, got) != canonical(t, want) {
			t.Errorf("%v: server\n%s\nengine\n%s", params, canonical(t, got), canonical(t, want))
		}
		if len(want.Records) == 0 {
			t.Errorf("%v: no records: the comparison says little", params)
		}
		// In pages of 2, the same records.
		var paged []retriever.Record
		p := map[string]any{"limit": 2}
		for k, v := range params {
			p[k] = v
		}
		for {
			var page lsp.RecordsResult
			c.mustCall(lsp.MethodRunRecords, p, &page)
			paged = append(paged, page.Records...)
			if page.Cursor == nil {
				break
			}
			p["cursor"] = *page.Cursor
		}
		if canonical(t, paged) != canonical(t, want.Records) {
			t.Errorf("%v: in pages of 2:\n%s", params, canonical(t, paged))
		}
	}
	var raw json.RawMessage
	c.mustCall(lsp.MethodRunRecords, map[string]any{"episode": "episode-2", "conversation": "conv-1", "limit": 3}, &raw)
	golden(t, "run-records.json", []byte(strings.ReplaceAll(canonical(t, raw), retriever.FileURI(mustReal(t, root)), "file://$RUN")+"\n"))
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// TestRunRecordsInvalidParams: -32602 naming the field, with the field in
// the error's data when the engine named it; the engine is not asked.
func TestRunRecordsInvalidParams(t *testing.T) {
	tests := []struct {
		name, params, field string
	}{
		{"no episode", `{}`, "episode"},
		{"null params", `null`, "episode"},
		{"episode empty", `{"episode":""}`, "episode"},
		{"episode not episode-N", `{"episode":"3"}`, "episode"},
		{"episode of the wrong type", `{"episode":3}`, "episode"},
		{"agent with a slash", `{"episode":"episode-1","agent":"../bob"}`, "agent"},
		{"minLevel unknown", `{"episode":"episode-1","minLevel":"LOUD"}`, "minLevel"},
		{"minLevel of the wrong type", `{"episode":"episode-1","minLevel":4}`, "minLevel"},
		{"from a date alone", `{"episode":"episode-1","from":"2026-10-21"}`, "from"},
		{"to before from", `{"episode":"episode-1","from":"2026-10-21 18:00:01","to":"2026-10-21 18:00:00"}`, "to"},
		{"limit zero", `{"episode":"episode-1","limit":0}`, "limit"},
		{"limit too large", `{"episode":"episode-1","limit":10001}`, "limit"},
		{"limit not an integer", `{"episode":"episode-1","limit":2.5}`, "limit"},
		{"limit a string", `{"episode":"episode-1","limit":"10"}`, "limit"},
		{"cursor not a cursor", `{"episode":"episode-1","cursor":"next please"}`, "cursor"},
		{"cursor of the wrong type", `{"episode":"episode-1","cursor":{}}`, "cursor"},
		{"params an array", `["episode-1"]`, "params"},
	}
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.call(lsp.MethodRunRecords, rawJSON(tt.params), nil)
			if codeOf(err) != jsonrpc2.InvalidParams {
				t.Fatalf("run/records %s = %v, want code -32602", tt.params, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %s", err, tt.field)
			}
		})
	}
	fake.mu.Lock()
	n := fake.recordsAsked
	fake.mu.Unlock()
	if n != 0 {
		t.Errorf("the engine was asked %d times", n)
	}
	var res lsp.RecordsResult
	c.mustCall(lsp.MethodRunRecords, map[string]any{"episode": "episode-1", "limit": 10000}, &res)
	if res.Records == nil || res.Cursor != nil {
		t.Errorf("a valid request: %+v", res)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
