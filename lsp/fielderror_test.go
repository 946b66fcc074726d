package lsp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"runls/lsp"
)

// TestFieldErrorsNameTheValue: every invalid field of run/search and
// run/records, of the wrong type or a bad value, answers -32602 with a
// message that names the field and the value given, and {"field", "value"}
// as the error's data (spec §5, §9, §13; guide: "rejected with the field
// and value named").
func TestFieldErrorsNameTheValue(t *testing.T) {
	c := start(t, startOpts{open: newFake().opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	for _, tt := range []struct {
		method, params, field, value string
	}{
		{lsp.MethodRunRecords, `{"episode": "episode-2", "limit": "abc"}`, "limit", "abc"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "limit": 1.5}`, "limit", "1.5"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "limit": 0}`, "limit", "0"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "limit": 10001}`, "limit", "10001"},
		{lsp.MethodRunRecords, `{"episode": 2}`, "episode", "2"},
		{lsp.MethodRunRecords, `{"episode": "2"}`, "episode", "2"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "agent": ["a"]}`, "agent", `["a"]`},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "agent": "../a"}`, "agent", "../a"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "minLevel": "LOUD"}`, "minLevel", "LOUD"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "from": "yesterday"}`, "from", "yesterday"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "to": true}`, "to", "true"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "cursor": "next"}`, "cursor", "next"},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "conversation": 7}`, "conversation", "7"},
		{lsp.MethodRunSearch, `{"query": "q", "topK": "ten"}`, "topK", "ten"},
		{lsp.MethodRunSearch, `{"query": "q", "topK": 1001}`, "topK", "1001"},
		{lsp.MethodRunSearch, `{"query": "q", "topK": 0}`, "topK", "0"},
		{lsp.MethodRunSearch, `{"query": "q", "scope": "world"}`, "scope", "world"},
		{lsp.MethodRunSearch, `{"query": "q", "scope": 1}`, "scope", "1"},
		{lsp.MethodRunSearch, `{"query": "q", "episode": "ep-2"}`, "episode", "ep-2"},
		{lsp.MethodRunSearch, `{"query": "q", "agent": "a/b"}`, "agent", "a/b"},
		{lsp.MethodRunSearch, `{"query": {"text":"q"}}`, "query", `{"text":"q"}`},
		{lsp.MethodRunSearch, `{"query": "q", "allConversations": "yes"}`, "allConversations", "yes"},
	} {
		err := c.call(tt.method, rawJSON(tt.params), nil)
		var we *jsonrpc2.Error
		if !errors.As(err, &we) || we.Code != jsonrpc2.InvalidParams {
			t.Errorf("%s %s: %v, want -32602", tt.method, tt.params, err)
			continue
		}
		if !strings.Contains(we.Message, tt.field) || !strings.Contains(we.Message, tt.value) {
			t.Errorf("%s %s: %q does not name %s and %s", tt.method, tt.params, we.Message, tt.field, tt.value)
		}
		var data struct{ Field, Value string }
		if we.Data == nil || json.Unmarshal(*we.Data, &data) != nil || data.Field != tt.field || data.Value != tt.value {
			t.Errorf("%s %s: data %s, want field %s and value %s", tt.method, tt.params, mustJSON(we.Data), tt.field, tt.value)
		}
	}
	// "" is absent (spec §5), whatever the field's type.
	for _, tt := range []struct{ method, params string }{
		{lsp.MethodRunSearch, `{"query": "q", "topK": "", "scope": "", "episode": "", "agent": "", "allConversations": ""}`},
		{lsp.MethodRunRecords, `{"episode": "episode-2", "limit": "", "minLevel": "", "from": "", "to": "", "cursor": "", "agent": ""}`},
		{lsp.MethodRunInfo, `{"episode": ""}`},
	} {
		if err := c.call(tt.method, rawJSON(tt.params), nil); err != nil {
			t.Errorf("%s %s: %v, want an answer", tt.method, tt.params, err)
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
