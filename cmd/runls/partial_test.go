package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.lsp.dev/protocol"

	"runls/retriever"
)

// holdingBinary builds runls with the runls_holdindex build and sets
// RUNLS_HOLD_INDEX (and a cache folder of the test's own): its first index
// commits one batch, then waits until the file it gives exists.
func holdingBinary(t *testing.T) (bin, release string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	release = filepath.Join(t.TempDir(), "release")
	t.Setenv("RUNLS_HOLD_INDEX", release)
	t.Setenv("RUNLS_CACHE_DIR", t.TempDir())
	return buildBinary(t, "-tags", "runls_holdindex"), release
}

// indexingShare is the share of the indexing notice of res, or -1 when it
// has none.
func indexingShare(t *testing.T, res retriever.Result) int {
	t.Helper()
	for _, n := range res.Notices {
		if n.Field == retriever.IndexingField {
			pct, err := strconv.Atoi(strings.TrimSuffix(n.Value, "%"))
			if err != nil || !strings.HasSuffix(n.Value, "%") {
				t.Fatalf("indexing notice value %q, want a share like 40%%", n.Value)
			}
			return pct
		}
	}
	return -1
}

// TestServePartialWhileIndexing: runls serve over stdio answers run/search
// within the grace while its first index is held part-built, with the
// indexing notice and run/info saying not done (spec §12); once the index
// is built, the answer has no notice and equals a complete index's.
func TestServePartialWhileIndexing(t *testing.T) {
	bin, release := holdingBinary(t)
	run := copySample(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, cmd, stderr, _ := startServe(ctx, t, bin, run, "--stdio", "--log-level", "info")

	query := map[string]any{"query": "deploy database migration"}
	start := time.Now()
	var res retriever.Result
	if _, err := conn.Call(ctx, "run/search", query, &res); err != nil {
		t.Fatalf("run/search: %v", err)
	}
	took := time.Since(start)
	if pct := indexingShare(t, res); pct < 0 || pct >= 100 {
		t.Fatalf("run/search while the index is held: %+v, want the indexing notice with a share under 100%%", res)
	}
	// The index cannot end while held: the answer came from the grace.
	// The bound is loose, for a loaded machine.
	if took > retriever.PartialGrace+10*time.Second {
		t.Errorf("run/search while indexing took %v, want about the grace (%v)", took, retriever.PartialGrace)
	}
	var info retriever.Info
	if _, err := conn.Call(ctx, "run/info", map[string]any{}, &info); err != nil {
		t.Fatal(err)
	}
	if info.Indexing.Done {
		t.Errorf("run/info while the index is held: %+v, want done false", info.Indexing)
	}
	// workspace/symbol answers too, each symbol saying it is of a partial answer.
	var syms []protocol.SymbolInformation
	if _, err := conn.Call(ctx, protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, &syms); err != nil {
		t.Fatal(err)
	}
	if len(syms) == 0 {
		t.Errorf("workspace/symbol while the index is held: no symbols, want those of the batch indexed")
	}
	for _, s := range syms {
		if !strings.Contains(s.ContainerName, " · partial: ") || !strings.HasSuffix(s.ContainerName, "% indexed") {
			t.Errorf("workspace/symbol while the index is held: container %q, want it to say the answer is partial", s.ContainerName)
		}
	}

	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for !info.Indexing.Done {
		if ctx.Err() != nil {
			t.Fatal("the index was not done a minute after its release")
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := conn.Call(ctx, "run/info", map[string]any{}, &info); err != nil {
			t.Fatal(err)
		}
	}
	var final retriever.Result
	if _, err := conn.Call(ctx, "run/search", query, &final); err != nil {
		t.Fatal(err)
	}
	syms = nil
	if _, err := conn.Call(ctx, protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, &syms); err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if strings.Contains(s.ContainerName, "partial") {
			t.Errorf("workspace/symbol once indexed: container %q says partial", s.ContainerName)
		}
	}
	ix, err := retriever.Open(ctx, retriever.Options{Root: run})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	want, err := ix.Search(ctx, retriever.Request{Query: "deploy database migration", Episode: "episode-2", Conversation: "conv-1"})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(final)
	w, _ := json.Marshal(want)
	if len(want.Items) == 0 || string(g) != string(w) {
		t.Errorf("run/search once indexed:\n got %s\nwant %s", g, w)
	}

	if _, err := conn.Call(ctx, protocol.MethodShutdown, nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := conn.Notify(ctx, protocol.MethodExit, nil); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("runls serve ended with %v\nstderr:\n%s", err, stderr.String())
	}
	conn.Close()
	<-conn.Done()
}

// TestSearchPartialFlag: runls search --partial answers while the first
// index is held, with a "runls: note:" line saying the answer is partial
// (and the notice in --json); without --partial it waits for the whole
// index, as before.
func TestSearchPartialFlag(t *testing.T) {
	bin, release := holdingBinary(t)
	run := copySample(t)

	code, out, errb := runBin(t, bin, "search", "--partial", "--json", run, "deploy")
	var res retriever.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || code == 2 {
		t.Fatalf("search --partial --json: exit %d, %v\nstdout %s\nstderr %s", code, err, out, errb)
	}
	if pct := indexingShare(t, res); pct < 0 || pct >= 100 {
		t.Errorf("search --partial --json while held: %s, want the indexing notice with a share under 100%%", out)
	}
	code, _, errb = runBin(t, bin, "search", "--partial", run, "deploy")
	if code == 2 || !strings.Contains(errb, "runls: note: the run is still being indexed: this answer is partial") {
		t.Errorf("search --partial while held: exit %d, stderr %q: want the partial note", code, errb)
	}

	// Without --partial the search waits: it ends only after the release.
	go func() {
		time.Sleep(2 * retriever.PartialGrace)
		os.WriteFile(release, nil, 0o644)
	}()
	start := time.Now()
	code, out, errb = runBin(t, bin, "search", "--json", run, "deploy")
	if time.Since(start) < 2*retriever.PartialGrace {
		t.Errorf("search without --partial answered before the index was released")
	}
	res = retriever.Result{}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || indexingShare(t, res) != -1 {
		t.Errorf("search after the release: exit %d, %v, %s %s: want a complete answer, no notice", code, err, out, errb)
	}
	code, _, errb = runBin(t, bin, "search", "--partial", run, "deploy")
	if code != 0 || strings.Contains(errb, "indexing") {
		t.Errorf("search --partial once nothing is held: exit %d, stderr %q: want no partial note", code, errb)
	}
}

// TestMCPPartialWhileIndexing: runls mcp, through the MCP SDK's client over
// stdio, answers search while its first index is held part-built, the
// structured result with the indexing notice and the text saying first that
// the answer is partial; run_info answers meanwhile with indexing not done;
// once released, search answers completely, as runls search --json does.
func TestMCPPartialWhileIndexing(t *testing.T) {
	bin, release := holdingBinary(t)
	run := copySample(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr syncBuffer
	cmd := exec.Command(bin, "mcp", run)
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "partial", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"query": "deploy database migration", "episode": "episode-2", "conversation": "conv-1"}
	search := func() (retriever.Result, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("search: %v %+v (stderr: %s)", err, res, stderr.String())
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var got retriever.Result
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		return got, res.Content[0].(*mcp.TextContent).Text
	}
	res, text := search()
	if pct := indexingShare(t, res); pct < 0 || pct >= 100 {
		t.Errorf("search while the index is held: notices %+v, want the indexing notice under 100%%", res.Notices)
	}
	if !strings.HasPrefix(text, "(partial answer: the run is still being indexed") {
		t.Errorf("search's text while the index is held:\n%s\nwant it to say first that the answer is partial", text)
	}
	info, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_info", Arguments: map[string]any{}})
	if err != nil || info.IsError {
		t.Fatalf("run_info: %v %+v", err, info)
	}
	if txt := info.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, ", indexing\n") {
		t.Errorf("run_info while the index is held: %q, want it to say indexing", txt)
	}

	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		res, text = search()
		if indexingShare(t, res) < 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("search still partial a minute after the release")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(text, "partial") {
		t.Errorf("search's text once indexed says partial:\n%s", text)
	}
	code, out, errb := runBin(t, bin, "search", "--json", "--episode", "episode-2", "--conversation", "conv-1", "--top-k", "10", run, "deploy database migration")
	var want retriever.Result
	if err := json.Unmarshal([]byte(out), &want); err != nil || code != 0 {
		t.Fatalf("runls search --json: exit %d, %v, %s", code, err, errb)
	}
	if len(res.Items) != len(want.Items) || len(want.Items) == 0 {
		t.Fatalf("search once indexed: %d items, runls search %d", len(res.Items), len(want.Items))
	}
	for i := range want.Items {
		if res.Items[i].Text != want.Items[i].Text {
			t.Errorf("item %d: %q, runls search gives %q", i, res.Items[i].Text, want.Items[i].Text)
		}
	}
}
