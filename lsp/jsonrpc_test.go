package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap/zaptest"

	"runls/lsp"
	"runls/retriever"
)

// rawClient writes bytes as they come and reads framed replies, for the
// cases the jsonrpc2 package cannot send (or read: it has no null id).
type rawClient struct {
	t    *testing.T
	conn net.Conn
	in   *bufio.Reader
	done chan error
}

func startRaw(t *testing.T, e lsp.Engine) *rawClient {
	t.Helper()
	a, b := net.Pipe()
	rc := &rawClient{t: t, conn: b, in: bufio.NewReader(b), done: make(chan error, 1)}
	go func() {
		rc.done <- lsp.Serve(context.Background(), a, lsp.Options{
			Logger: zaptest.NewLogger(t),
			Open:   func(context.Context, retriever.Options) (lsp.Engine, error) { return e, nil },
		})
	}()
	t.Cleanup(func() {
		_ = b.Close()
		<-rc.done
	})
	return rc
}

func (rc *rawClient) write(s string) {
	rc.t.Helper()
	go func() { _, _ = io.WriteString(rc.conn, s) }() // net.Pipe: the reader takes it
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func request(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// read returns the next message that is a reply (server requests and
// notifications are skipped).
func (rc *rawClient) read() map[string]json.RawMessage {
	rc.t.Helper()
	_ = rc.conn.SetReadDeadline(time.Now().Add(waitTimeout))
	for {
		body, err := lsp.ReadFrame(rc.in)
		if err != nil {
			rc.t.Fatalf("reading a reply: %v", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			rc.t.Fatalf("reply %q: %v", body, err)
		}
		if _, isRequest := m["method"]; !isRequest {
			return m
		}
	}
}

type wantReply struct {
	id   string // as JSON
	code int    // 0: a result
}

// expect reads replies until it has one for each wanted id (in any order:
// requests are answered concurrently) and checks their codes.
func (rc *rawClient) expect(wants ...wantReply) {
	rc.t.Helper()
	left := map[string]int{}
	for _, w := range wants {
		left[w.id] = w.code
	}
	for len(left) > 0 {
		m := rc.read()
		id := string(m["id"])
		code, ok := left[id]
		if !ok {
			rc.t.Errorf("unexpected reply %s", stringify(m))
			continue
		}
		delete(left, id)
		var e struct {
			Code int `json:"code"`
		}
		if m["error"] != nil {
			_ = json.Unmarshal(m["error"], &e)
		}
		if e.Code != code {
			rc.t.Errorf("reply code = %d, want %d (reply %s)", e.Code, code, stringify(m))
		}
	}
}

func stringify(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// TestBadInput: each bad message gets the answer JSON-RPC prescribes, and the
// server answers the next good one.
func TestBadInput(t *testing.T) {
	okInfo := request(99, lsp.MethodRunInfo, "{}")
	tests := []struct {
		name  string
		send  string
		wants []wantReply
	}{
		{"body not JSON", frame(`{"jsonrpc":"2.0","id":5,"method":`), []wantReply{{"null", -32700}}},
		{"JSON but not a message", frame(`{"jsonrpc":"1.0","id":5,"method":"run/info"}`), []wantReply{{"5", -32600}}},
		{"JSON array", frame(`[1,2,3]`), []wantReply{{"null", -32600}}},
		{"Content-Length too small", fmt.Sprintf("Content-Length: %d\r\n\r\n%s", 20, request(5, lsp.MethodRunInfo, "{}")), []wantReply{{"null", -32700}}},
		{"Content-Length too large", func() string {
			b := request(5, lsp.MethodRunInfo, "{}")
			return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(b)+40, b)
		}(), []wantReply{{"5", 0}}},
		{"Content-Length too large by a few bytes", func() string {
			b := request(5, lsp.MethodRunInfo, "{}")
			return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(b)+3, b)
		}(), []wantReply{{"5", 0}}},
		{"Content-Length not a number", "Content-Length: ten\r\n\r\n" + request(5, lsp.MethodRunInfo, "{}"), nil},
		{"no Content-Length", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + request(5, lsp.MethodRunInfo, "{}"), nil},
		{"garbage line", "hello there\r\n", nil},
		{"unknown method", frame(request(5, "run/unknown", "{}")), []wantReply{{"5", -32601}}},
		{"unknown notification", frame(`{"jsonrpc":"2.0","method":"$/unknown","params":{}}`), nil},
		{"unknown method without params", frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/definition"}`), []wantReply{{"5", -32601}}},
		{"served method without params", frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/hover"}`), []wantReply{{"5", -32602}}},
		{"wrong param type, standard method", frame(request(5, protocol.MethodWorkspaceSymbol, `{"query":5}`)), []wantReply{{"5", -32602}}},
		{"wrong param type, run/search", frame(request(5, lsp.MethodRunSearch, `{"topK":"five"}`)), []wantReply{{"5", -32602}}},
		{"params not an object, run/search", frame(request(5, lsp.MethodRunSearch, `[1]`)), []wantReply{{"5", -32602}}},
		{"string id", frame(`{"jsonrpc":"2.0","id":"abc","method":"run/info","params":{}}`), []wantReply{{`"abc"`, 0}}},
		{"cancel of nothing", frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":12345}}`), nil},
		{"cancel with a bad id", frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"x":1}}}`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := startRaw(t, newFake())
			rc.write(frame(request(1, protocol.MethodInitialize, `{"processId":null,"rootUri":"file:///fake/run","capabilities":{}}`)))
			rc.expect(wantReply{"1", 0})
			rc.write(tt.send + frame(okInfo))
			rc.expect(append(tt.wants, wantReply{"99", 0})...)
		})
	}
}

func TestCancelRequest(t *testing.T) {
	tests := []struct {
		name   string
		cancel func(c *client, id jsonrpc2.ID)
	}{
		{"numeric id, as VS Code and Neovim send it", func(c *client, id jsonrpc2.ID) {
			c.notify(protocol.MethodCancelRequest, json.RawMessage(fmt.Sprintf(`{"id":%v}`, id)))
		}},
		{"numeric id through protocol.Call's own cancel", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake()
			entered := make(chan struct{})
			var once sync.Once
			ended := make(chan error, 1)
			fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
				once.Do(func() { close(entered) })
				<-ctx.Done()
				ended <- ctx.Err()
				return retriever.Result{}, ctx.Err()
			}
			c := start(t, startOpts{open: fake.opener(nil, nil)})
			c.initialize("/fake/run", false, nil) // request id 1

			errc := make(chan error, 1)
			if tt.cancel != nil {
				go func() { errc <- c.call(lsp.MethodRunSearch, map[string]any{"query": "slow"}, nil) }()
				<-entered
				tt.cancel(c, jsonrpc2.NewNumberID(2))
				err := <-errc
				if codeOf(err) != protocol.CodeRequestCancelled {
					t.Errorf("cancelled run/search answered %v (code %d), want code -32800", err, codeOf(err))
				}
			} else {
				ctx, cancel := context.WithCancel(context.Background())
				go func() { errc <- protocol.Call(ctx, c.conn, lsp.MethodRunSearch, map[string]any{"query": "slow"}, nil) }()
				<-entered
				cancel()
				<-errc
			}
			select {
			case err := <-ended:
				if err != context.Canceled {
					t.Errorf("engine search ended with %v", err)
				}
			case <-time.After(waitTimeout):
				t.Fatal("the engine's search was never cancelled")
			}
			var info map[string]any
			c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info) // still serving
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
}

func TestPanicInEngine(t *testing.T) {
	fake := newFake()
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		panic("engine bug")
	}
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	err := c.call(lsp.MethodRunSearch, map[string]any{"query": "x"}, nil)
	if codeOf(err) != jsonrpc2.InternalError {
		t.Errorf("run/search with a panicking engine = %v, want code -32603", err)
	}
	var info map[string]any
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestCancelStringID: a string id cancels too, and the reply carries it.
func TestCancelStringID(t *testing.T) {
	fake := newFake()
	entered := make(chan struct{})
	var once sync.Once
	fake.search = func(ctx context.Context, req retriever.Request) (retriever.Result, error) {
		once.Do(func() { close(entered) })
		<-ctx.Done()
		return retriever.Result{}, ctx.Err()
	}
	rc := startRaw(t, fake)
	rc.write(frame(request(1, protocol.MethodInitialize, `{"processId":null,"rootUri":"file:///fake/run","capabilities":{}}`)))
	rc.expect(wantReply{"1", 0})
	rc.write(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
		frame(`{"jsonrpc":"2.0","id":"s-1","method":"run/search","params":{"query":"slow"}}`))
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("the search never started")
	}
	rc.write(frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"s-1"}}`) + frame(request(2, lsp.MethodRunInfo, "{}")))
	rc.expect(wantReply{`"s-1"`, int(protocol.CodeRequestCancelled)}, wantReply{"2", 0})
}
