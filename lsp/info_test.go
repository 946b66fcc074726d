package lsp_test

import (
	"testing"

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
