package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzMCPStdin feeds arbitrary bytes to `runls mcp` as its whole stdin
// (in-process, through runMCP). Whatever the bytes, it exits 0, in time,
// writes only JSON lines to stdout and logs no ERROR.
func FuzzMCPStdin(f *testing.F) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	for _, seed := range []string{
		initialize + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"deploy","episode":"episode-2","conversation":"conv-1"}}}` + "\n",
		initialize + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"episode-2/bob/bob.log","startLine":2}}}`,
		initialize + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_info"},"_meta":{"progressToken":1}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}` + "\n",
		initialize + `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"../../../etc/passwd"}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}` + "\n",
		initialize + "garbage\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"x\"}\n",
		"\xff\xfe\x00{\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	run := copySample(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var stdout, stderr syncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code := runMCP(ctx, []string{run}, bytes.NewReader(data), &stdout, &stderr)
		if ctx.Err() != nil {
			t.Fatalf("runls mcp did not end within 30 s of its stdin's end")
		}
		if code != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", code, stderr.String())
		}
		if strings.Contains(stderr.String(), "ERROR") {
			t.Errorf("logged an error:\n%s", stderr.String())
		}
		written := stdout.String()
		for _, line := range strings.Split(strings.TrimSuffix(written, "\n"), "\n") {
			if line != "" && !json.Valid([]byte(line)) {
				t.Errorf("stdout holds a line that is not JSON: %q", line)
			}
		}
	})
}
