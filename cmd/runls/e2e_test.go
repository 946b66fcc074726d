package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"runls/retriever"
)

// TestEndToEnd builds the binary and speaks to `runls serve` over its stdin
// and stdout, as an editor does: initialize, run/search, shutdown, exit.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, cmd, stderr, init := startServe(ctx, t, bin, run, "--stdio", "--log-level", "debug")
	if init.ServerInfo.Name != "runls" || init.Capabilities["workspaceSymbolProvider"] == nil {
		t.Errorf("initialize result %+v", init)
	}

	req := retriever.Request{Query: "deploy database migration", Episode: "episode-2", Conversation: "conv-1"}
	var got retriever.Result
	if _, err := conn.Call(ctx, "run/search", map[string]any{"query": req.Query}, &got); err != nil {
		t.Fatalf("run/search: %v", err)
	}
	ix, err := retriever.Open(ctx, retriever.Options{Root: run})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	want, err := ix.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if len(want.Items) == 0 || !bytes.Equal(g, w) {
		t.Errorf("run/search over stdio:\n got %s\nwant %s", g, w)
	}

	if _, err := conn.Call(ctx, protocol.MethodShutdown, nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := conn.Notify(ctx, protocol.MethodExit, nil); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) || err != nil {
		t.Errorf("runls serve ended with %v, want exit code 0\nstderr:\n%s", err, stderr.String())
	}
	conn.Close()
	<-conn.Done()
	if !strings.Contains(stderr.String(), "initialize") {
		t.Errorf("the log on stderr lacks the initialize line:\n%s", stderr.String())
	}
}

// TestEndToEndClosedStdin: an editor that dies closes the server's stdin; the
// server ends, with exit code 1 as there was no shutdown.
func TestEndToEndClosedStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin) // serve is the default
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("runls with a closed stdin ended with %v, want exit code 1", err)
	}
	if ctx.Err() != nil {
		t.Errorf("runls did not end by itself")
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
}

// initResult is what TestEndToEnd reads of the initialize result.
type initResult struct {
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	ServerInfo   struct{ Name string }      `json:"serverInfo"`
}

// startServe starts `runls serve` with args on the run folder run, as an
// editor does (initialize with episode-2 and conv-1, then initialized), and
// gives the connection, the process and its stderr.
func startServe(ctx context.Context, t *testing.T, bin, run string, args ...string) (jsonrpc2.Conn, *exec.Cmd, *syncBuffer, initResult) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve"}, args...)...)
	cmd.Dir = t.TempDir()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The package's own stream fails on anything but framed JSON-RPC, so a
	// stray byte on stdout fails the test.
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(pipeConn{stdout, stdin}))
	conn.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		return reply(ctx, nil, nil) // window/workDoneProgress/create and notifications
	})
	var init initResult
	if _, err := conn.Call(ctx, protocol.MethodInitialize, map[string]any{
		"processId": nil, "rootUri": retriever.FileURI(run),
		"capabilities":          map[string]any{"window": map[string]any{"workDoneProgress": true}},
		"initializationOptions": map[string]any{"runls": map[string]any{"episode": "episode-2", "conversation": "conv-1"}},
	}, &init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := conn.Notify(ctx, protocol.MethodInitialized, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	return conn, cmd, stderr, init
}

// syncBuffer is what a process or a runServe writes (its stdout, its
// stderr), which the test may read while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// buildBinary builds runls into the test's temporary folder (the Go build
// cache makes the second build of a run cheap), with the build's flags
// (e.g. -tags).
func buildBinary(t testing.TB, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "runls")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := append(append([]string{"build"}, flags...), "-o", bin, ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
