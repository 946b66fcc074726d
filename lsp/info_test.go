package lsp_test

import (
	"context"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"runls/lsp"
	"runls/retriever"
)

// TestRunInfoDoesNotWait: run/info answers while indexing (it says how far
// that is), where run/search waits.
func TestRunInfoDoesNotWait(t *testing.T) {
	fake := newFake()
	fake.refreshGate = make(chan struct{})
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	var info retriever.Info
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &info)
	if info.Root != "file:///fake/run" || info.Agents == nil || info.Episodes == nil {
		t.Errorf("run/info = %+v, want the engine's, with lists not null", info)
	}
	close(fake.refreshGate)
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestRunInfoConversations: run/info with an episode adds the engine's
// summaries of its conversations; without one it has none; a bad episode
// answers -32602 naming it.
func TestRunInfoConversations(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	c.initialize(root, true, nil)
	c.waitIndexed()
	ix := openIndex(t, retriever.Options{Root: root})
	want, err := ix.Conversations(context.Background(), "episode-2")
	if err != nil || len(want) == 0 {
		t.Fatalf("Index.Conversations = %v, %v: want the sample run's", want, err)
	}
	var got lsp.InfoResult
	c.mustCall(lsp.MethodRunInfo, map[string]any{"episode": "episode-2"}, &got)
	if g, w := canonical(t, got.Conversations), canonical(t, want); g != w {
		t.Errorf("run/info conversations:\n got %s\nwant %s", g, w)
	}
	if len(got.Episodes) == 0 {
		t.Errorf("run/info with an episode lost the episodes")
	}
	var plain map[string]any
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &plain)
	if _, ok := plain["conversations"]; ok {
		t.Errorf("run/info without an episode has conversations")
	}
	err = c.call(lsp.MethodRunInfo, map[string]any{"episode": "ep-1"}, nil)
	if codeOf(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "episode") {
		t.Errorf("run/info episode ep-1: %v, want -32602 naming episode", err)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
