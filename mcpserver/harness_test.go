package mcpserver_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/masking"
	"runls/mcpserver"
	"runls/retriever"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// sampleRun is the repository's sample run.
func sampleRun(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "sample-run"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type startOpts struct {
	mask        bool
	interpreter string // rules file
	engine      mcpserver.Engine
	client      *mcp.ClientOptions
	idleMerge   time.Duration // mcpserver.Options.IdleMerge
}

// start opens an index of root (or uses o.engine), serves it in process and
// connects the SDK's client to it.
func start(t testing.TB, root string, o startOpts) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	eng := o.engine
	opts := mcpserver.Options{Version: "test", ProgressEvery: time.Millisecond, IdleMerge: o.idleMerge}
	if eng == nil {
		ropts := retriever.Options{Root: root}
		if o.interpreter != "" {
			in, err := retriever.LoadInterpreter(o.interpreter)
			if err != nil {
				t.Fatal(err)
			}
			ropts.Interpreter = in
		}
		if o.mask {
			real, err := filepath.EvalSymlinks(root)
			if err != nil {
				t.Fatal(err)
			}
			ropts.Masker = masking.HidingOutside(real)
			opts.Masker = ropts.Masker
		}
		ix, err := retriever.Open(ctx, ropts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		// Indexed before the server starts: search answers from what is
		// indexed once its grace (0.5 s) has passed, so on a loaded machine
		// a test's first search was partial. The calls made while a first
		// indexing runs are tested with engines of their own.
		if _, err := ix.Refresh(ctx, nil); err != nil {
			cancel()
			t.Fatal(err)
		}
		eng = ix
	}
	srv, err := mcpserver.New(eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, o.client).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after the client closed the session")
		}
		cancel()
	})
	return cs
}

// call calls a tool and fails on a protocol error.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// text is the text content of a result.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// golden compares got (marshalled as indented JSON) with testdata/name.json,
// or rewrites the file with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./mcpserver -update to write it)", err)
	}
	if string(want) != string(data) {
		t.Errorf("%s differs from the golden file (go test ./mcpserver -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", path, t.Name(), data, want)
	}
}

// writeRun writes files (slash paths relative to a new run folder).
func writeRun(t testing.TB, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "run")
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
