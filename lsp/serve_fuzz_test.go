package lsp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"runls/lsp"
	"runls/retriever"
)

// fuzzConn is the server's side of a fuzzed session: it reads what the test
// writes into a pipe and notes when the replies to the test's own requests
// (ids "fuzz-sync" and "fuzz-end") are out.
type fuzzConn struct {
	r         *io.PipeReader
	sync, end chan struct{}
	syncOnce  sync.Once
	endOnce   sync.Once
}

func (c *fuzzConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"id":"fuzz-sync"`)) {
		c.syncOnce.Do(func() { close(c.sync) })
	}
	if bytes.Contains(p, []byte(`"id":"fuzz-end"`)) {
		c.endOnce.Do(func() { close(c.end) })
	}
	return len(p), nil
}
func (c *fuzzConn) Close() error { return c.r.Close() }

// badLogs are log messages that only a bug writes: a recovered panic, a
// request answered twice or never.
var badLogs = map[string]bool{
	"panic":                                true,
	"panic in a handler":                   true,
	"a handler did not reply":              true,
	"a second reply was dropped":           true,
	"encoding an error answer":             true,
	"the connection's reader did not stop": true,
}

// FuzzServeMessages: after a proper initialize on the sample run, each line
// of the input is sent as one message body (framed with its true length),
// then a shutdown request. Whatever the bodies, the server answers the
// shutdown (or has exited on an exit notification), returns once the
// connection ends, and never panics (a recovered panic is logged at ERROR,
// and counts as a finding here). Framing itself is fuzzed by FuzzStreamRead
// and by cmd/runls's FuzzServeStdin.
func FuzzServeMessages(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"run/search","params":{"query":"deploy database","episode":"episode-2","conversation":"conv-1"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"run/search","params":{"query":"x","topK":0}}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"run/search","params":{"query":"x","topK":1001,"scope":"nope"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"run/search","params":{"agent":"..","episode":"episode-x"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"run/search","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":6,"method":"run/search","params":{"query":5,"topK":"a"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"workspace/symbol","params":{"query":"alice"}}` + "\n" + `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`,
		`{"jsonrpc":"2.0","id":8,"method":"workspace/symbol","params":null}`,
		`{"jsonrpc":"2.0","id":9,"method":"run/info","params":{}}`,
		`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"runls":{"masking":"hidingOutside","topK":3,"interpreter":{"rules":[{"match":"(","reading":"told"}]}}}}}`,
		`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"runls":{"interpreter":{"rules":[{"match":"^(?P<text>.*)$","reading":"said"}]},"maxDiagnosticsPerFile":-1}}}}` + "\n" + `{"jsonrpc":"2.0","id":10,"method":"run/search","params":{"query":"said"}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///../etc/passwd","languageId":"x","version":1,"text":""}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"%zz"}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"shutdown"}` + "\n" + `{"jsonrpc":"2.0","id":12,"method":"run/search","params":{}}`,
		`{"jsonrpc":"2.0","method":"exit"}`,
		`{"jsonrpc":"2.0","id":13,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":14,"method":"no/such"}` + "\n" + `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"14"}}`,
		`{"jsonrpc":"2.0","id":15,"result":null}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":{},"method":"run/info"}`,
		`not json` + "\n" + `[]` + "\n" + `{}` + "\n" + `null`,
		`{"jsonrpc":"2.0","id":16,"method":"window/workDoneProgress/cancel","params":{"token":"x"}}`,
		`{"jsonrpc":"2.0","id":17,"method":"$/setTrace","params":{"value":"verbose"}}`,
	} {
		f.Add([]byte(seed))
	}
	root := sampleRun(f) // only read by the server: one copy serves every input
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Contains(bytes.ToLower(data), []byte("content-length")) {
			// A body that holds a header is cut there by the stream on
			// purpose (it resynchronises), which can swallow the closing
			// shutdown: framing is FuzzStreamRead's and FuzzServeStdin's.
			t.Skip("body holds a header")
		}
		var in bytes.Buffer
		writeFrame := func(body string) { fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(body), body) }
		writeFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"processId":null,"rootUri":%q,"capabilities":{}}}`,
			retriever.FileURI(root)))
		writeFrame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			writeFrame(string(line))
		}
		// A search, answered once the requests before it have had their
		// turn (after indexing, or the answer grace's partial answer), so
		// that the shutdown that follows does not merely cancel them.
		writeFrame(`{"jsonrpc":"2.0","id":"fuzz-sync","method":"run/search","params":{"query":"alice"}}`)

		core, logs := observer.New(zapcore.DebugLevel)
		pr, pw := io.Pipe()
		conn := &fuzzConn{r: pr, sync: make(chan struct{}), end: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			done <- lsp.Serve(context.Background(), conn, lsp.Options{Logger: zap.New(core), PollInterval: 50 * time.Millisecond})
		}()
		write := func(b []byte) {
			b = bytes.Clone(b)
			go func() { _, _ = pw.Write(b) }() // a server that exited reads no more
		}
		write(in.Bytes())
		served := false
		for _, step := range []struct {
			what  string
			reply chan struct{}
		}{{"the closing search", conn.sync}, {"the closing shutdown", conn.end}} {
			if served {
				break
			}
			if step.reply == conn.end {
				in.Reset()
				writeFrame(`{"jsonrpc":"2.0","id":"fuzz-end","method":"shutdown"}`)
				write(in.Bytes())
			}
			select {
			case <-step.reply:
			case <-done:
				served = true
			case <-time.After(waitTimeout):
				t.Errorf("%s was never answered", step.what)
			}
		}
		_ = pw.Close()
		if !served {
			select {
			case <-done:
			case <-time.After(waitTimeout):
				t.Fatalf("Serve did not return after the connection ended")
			}
		}
		for _, e := range logs.All() {
			if badLogs[e.Message] || e.Level >= zapcore.ErrorLevel {
				t.Errorf("logged %s %q %v", e.Level, e.Message, fieldsOf(e))
			}
		}
	})
}

func fieldsOf(e observer.LoggedEntry) string {
	var b strings.Builder
	for k, v := range e.ContextMap() {
		fmt.Fprintf(&b, " %s=%v", k, v)
	}
	return b.String()
}
