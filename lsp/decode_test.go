package lsp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// decodeBodies are messages as editors send them (the fast path's) and
// others it leaves to jsonrpc2.
var decodeBodies = []struct {
	body string
	fast bool
}{
	{`{"jsonrpc":"2.0","id":1,"method":"run/search","params":{"query":"deploy database migration","topK":5}}`, true},
	{`{"jsonrpc":"2.0","id":2147483647,"method":"run/unknownMethod","params":{}}`, true},
	{`{"jsonrpc":"2.0","id":-3,"method":"m","params":[1,2,{"a":"b c"}]}`, true},
	{`{"jsonrpc":"2.0","id":"ab-1","method":"textDocument/hover","params":{"position":{"line":3,"character":4}}}`, true},
	{`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"text":"a \"quoted\" \\ line\n"}}}`, true},
	{` { "jsonrpc" : "2.0" , "method" : "initialized" , "params" : {} } `, true},
	{`{"params":{"x":"y"},"method":"$/cancelRequest","jsonrpc":"2.0"}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a": 1}}`, false},             // a space between tokens
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"<tag> & more"}}`, false}, // HTML's characters
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m"}`, false},
	{`{"jsonrpc":"2.0","id":2147483648,"method":"m","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":1.5,"method":"m","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":null,"method":"m","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":"a\"b","method":"m","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m\u0041","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	{`{"jsonrpc":"1.0","id":1,"method":"m","params":{}}`, false},
	{`{"id":1,"method":"m","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{}}`, false},
	{`{"jsonrpc":"2.0","ID":1,"method":"m","params":{}}`, false},
	{`[{"jsonrpc":"2.0","id":1,"method":"m","params":{}}]`, false},
	{`"text"`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"a` + "\u2028" + `b"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"` + strings.Repeat("a", maxFastBody-60) + `"}}`, true},
	{`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"text":"` + strings.Repeat("a", maxFastBody) + `"}}`, false}, // large: jsonrpc2's
}

// TestDecodeFast: the messages editors send take the fast path, the others
// do not, and every message it decodes is jsonrpc2.DecodeMessage's.
func TestDecodeFast(t *testing.T) {
	for _, c := range decodeBodies {
		if !json.Valid([]byte(c.body)) {
			t.Fatalf("%s: not JSON", c.body)
		}
		msg, ok := decodeFast([]byte(c.body))
		if ok != c.fast {
			t.Errorf("%s: fast %v, want %v", c.body, ok, c.fast)
		}
		if ok {
			sameAsJSONRPC(t, []byte(c.body), msg)
		}
	}
}

// FuzzDecodeFast: what the fast path decodes is what jsonrpc2 decodes.
func FuzzDecodeFast(f *testing.F) {
	for _, c := range decodeBodies {
		if len(c.body) > 2<<10 {
			continue // the fuzzer stalls minimizing a 16 KiB seed; TestDecodeFast asks them
		}
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		if msg, ok := decodeFast(body); ok {
			sameAsJSONRPC(t, body, msg)
		}
	})
}

// sameAsJSONRPC fails unless msg is what jsonrpc2.DecodeMessage makes of body.
func sameAsJSONRPC(t *testing.T, body []byte, msg jsonrpc2.Message) {
	t.Helper()
	want, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		t.Fatalf("%s: decoded, where jsonrpc2 says %v", body, err)
	}
	if reflect.TypeOf(msg) != reflect.TypeOf(want) {
		t.Fatalf("%s: a %T, jsonrpc2 makes a %T", body, msg, want)
	}
	switch w := want.(type) {
	case *jsonrpc2.Call:
		g := msg.(*jsonrpc2.Call)
		if g.ID() != w.ID() || g.Method() != w.Method() || !bytes.Equal(g.Params(), w.Params()) {
			t.Fatalf("%s: call %v %q %s, jsonrpc2's %v %q %s", body, g.ID(), g.Method(), g.Params(), w.ID(), w.Method(), w.Params())
		}
	case *jsonrpc2.Notification:
		g := msg.(*jsonrpc2.Notification)
		if g.Method() != w.Method() || !bytes.Equal(g.Params(), w.Params()) {
			t.Fatalf("%s: notification %q %s, jsonrpc2's %q %s", body, g.Method(), g.Params(), w.Method(), w.Params())
		}
	default:
		t.Fatalf("%s: a %T", body, want)
	}
}
