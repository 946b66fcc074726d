package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

func TestServeBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--no-such-flag"}, "no-such-flag"},
		{[]string{"some/folder"}, "unexpected argument"},
		{[]string{"--log-file", filepath.Join("no", "such", "dir", "x.log")}, "--log-file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runServe(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if first := strings.SplitN(stderr.String(), "\n", 2)[0]; !strings.Contains(first, tt.want) {
				t.Errorf("first line of stderr %q does not name %s", first, tt.want)
			}
			if !strings.Contains(stderr.String(), "usage:") {
				t.Errorf("stderr lacks the usage: %q", stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// session runs runServe on pipes and returns a jsonrpc2 client talking to it,
// the stdin writer (to close it) and the exit code's channel.
func session(t *testing.T, args []string) (jsonrpc2.Conn, io.Closer, chan int, *syncBuffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- runServe(context.Background(), args, inR, outW, stderr)
		outW.Close()
	}()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(pipeConn{outR, inW}))
	conn.Go(context.Background(), func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		return reply(ctx, nil, nil)
	})
	t.Cleanup(func() {
		conn.Close()
		<-conn.Done()
	})
	return conn, inW, code, stderr
}

type pipeConn struct {
	io.Reader
	io.WriteCloser
}

func waitCode(t *testing.T, code chan int) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(20 * time.Second):
		t.Fatal("runServe did not return")
		return -1
	}
}

func TestServeExitCodes(t *testing.T) {
	run := copySample(t)
	tests := []struct {
		name string
		end  func(t *testing.T, conn jsonrpc2.Conn, stdin io.Closer)
		want int
	}{
		{"shutdown then exit", func(t *testing.T, conn jsonrpc2.Conn, stdin io.Closer) {
			if _, err := conn.Call(context.Background(), protocol.MethodShutdown, nil, nil); err != nil {
				t.Fatal(err)
			}
			_ = conn.Notify(context.Background(), protocol.MethodExit, nil)
		}, 0},
		{"exit without shutdown", func(t *testing.T, conn jsonrpc2.Conn, stdin io.Closer) {
			_ = conn.Notify(context.Background(), protocol.MethodExit, nil)
		}, 1},
		{"stdin closed", func(t *testing.T, conn jsonrpc2.Conn, stdin io.Closer) {
			_ = stdin.Close()
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "runls.log")
			conn, stdin, code, stderr := session(t, []string{"--stdio", "--log-file", logFile, "--log-level", "debug"})
			var init map[string]any
			if _, err := conn.Call(context.Background(), protocol.MethodInitialize, map[string]any{
				"processId": nil, "rootUri": "file://" + run, "capabilities": map[string]any{},
			}, &init); err != nil {
				t.Fatal(err)
			}
			_ = conn.Notify(context.Background(), protocol.MethodInitialized, map[string]any{})
			var res struct {
				Items []json.RawMessage `json:"items"`
			}
			if _, err := conn.Call(context.Background(), "run/search", map[string]any{"query": "hotel booking"}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Items) == 0 {
				t.Errorf("run/search found nothing")
			}
			tt.end(t, conn, stdin)
			if got := waitCode(t, code); got != tt.want {
				t.Errorf("exit code %d, want %d", got, tt.want)
			}
			if stderr.String() != "" {
				t.Errorf("stderr has %q though the log goes to --log-file", stderr.String())
			}
			log, err := os.ReadFile(logFile)
			if err != nil || !bytes.Contains(log, []byte("initialize")) {
				t.Errorf("log file: %v, %q", err, log)
			}
		})
	}
}

func copySample(t testing.TB) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "sample-run")
	dst := filepath.Join(t.TempDir(), "sample-run")
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
