package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"runls/mcpserver"
	"runls/retriever"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// serveStdio runs the server over Stdio with stdin holding input (which
// ends right after it) and returns what it wrote, once Run has returned.
func serveStdio(t *testing.T, eng mcpserver.Engine, input string) []map[string]any {
	t.Helper()
	srv, err := mcpserver.New(eng, mcpserver.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = srv.Run(ctx, &mcpserver.Stdio{In: strings.NewReader(input), Out: &out})
	if err != nil && ctx.Err() != nil {
		t.Fatalf("Run: %v (timed out)", err)
	}
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout holds a line that is not JSON: %q", line)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func openSample(t *testing.T) *retriever.Index {
	t.Helper()
	ix, err := retriever.Open(context.Background(), retriever.Options{Root: sampleRun(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

const initLines = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// TestStdioAnswersAfterStdinEnds: a client that writes its requests and
// closes stdin at once (a one-shot pipe) gets every answer (go-sdk issue
// 1061 drops them on the SDK's own transport).
func TestStdioAnswersAfterStdinEnds(t *testing.T) {
	var in strings.Builder
	in.WriteString(initLines)
	const n = 20
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"deploy database migration","episode":"episode-2","conversation":"conv-1"}}}`+"\n", i)
	}
	fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"run_info","arguments":{}}}`)
	msgs := serveStdio(t, openSample(t), in.String())
	answered := map[string]bool{}
	for _, m := range msgs {
		answered[fmt.Sprint(m["id"])] = m["result"] != nil
	}
	for i := 0; i <= n; i++ {
		if !answered[fmt.Sprint(i)] {
			t.Errorf("request %d has no answer", i)
		}
	}
	if !answered["last"] {
		t.Error("the last request (no line end) has no answer")
	}
}

// TestStdioGarbage: lines that are not JSON-RPC each get a JSON-RPC error,
// and the session goes on (the SDK's own transport ends it at the first).
func TestStdioGarbage(t *testing.T) {
	garbage := []struct {
		line string
		code float64
		id   any
	}{
		{"garbage", -32700, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"`, -32700, nil},
		{"\x00\x01\x02", -32700, nil},
		{"42", -32600, nil},
		{`"a string"`, -32600, nil},
		{`[]`, -32600, nil},
		{`[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":8,"method":"tools/list"}`, -32600, float64(8)},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":9,"method":5}`, -32600, float64(9)},
		{`{"jsonrpc":"2.0","id":10,"error":{"code":"x"}}`, -32600, float64(10)},
		{`{"jsonrpc":"2.0","result":{}}`, -32600, nil},
		{`{"jsonrpc":2}`, -32600, nil},
		{strings.Repeat("x", mcpserver.MaxMessageBytes+10), -32600, nil},
	}
	var in strings.Builder
	in.WriteString(initLines)
	for _, g := range garbage {
		in.WriteString(g.line + "\n\n   \n")
	}
	// Well-formed but wrong: answered by the SDK, the session going on.
	in.WriteString(`{"jsonrpc":"2.0","id":20,"method":"no/such/method"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":"not an object"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"read","arguments":{"path":"../../../../etc/passwd"}}}` + "\n")
	in.WriteString("  \t" + `{"jsonrpc":"2.0","id":23,"method":"tools/list"}` + " \t \r\n")
	in.WriteString(`{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + strings.Repeat("a/", 5<<20) + `"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}` + "\n")
	msgs := serveStdio(t, openSample(t), in.String())

	var errs []map[string]any
	byID := map[string]map[string]any{}
	for _, m := range msgs {
		id := fmt.Sprint(m["id"])
		if _, isErr := m["error"]; isErr && id != "20" && id != "21" {
			errs = append(errs, m) // the refusals, in the order of the lines
		}
		byID[id] = m
	}
	if len(errs) != len(garbage) {
		t.Fatalf("%d errors for %d refused lines: %v", len(errs), len(garbage), msgs)
	}
	for i, g := range garbage {
		e := errs[i]["error"].(map[string]any)
		if e["code"] != g.code || errs[i]["id"] != g.id {
			t.Errorf("line %.40q: answered %v, want code %v id %v", g.line, errs[i], g.code, g.id)
		}
	}
	for id, want := range map[string]string{"20": "error", "21": "error", "22": "result", "23": "result", "24": "result", "99": "result"} {
		if byID[id] == nil || byID[id][want] == nil {
			t.Errorf("request %s: %v, want a %s", id, byID[id], want)
		}
	}
	if res, _ := byID["22"]["result"].(map[string]any); res["isError"] != true || strings.Contains(fmt.Sprint(res), "root:") {
		t.Errorf("a read of /etc/passwd: %v", res)
	}
	if res, _ := byID["24"]["result"].(map[string]any); res["isError"] != true || len(fmt.Sprint(res)) > 2000 {
		t.Errorf("a read of a 10 MB path: %.2000v", res)
	}
}
