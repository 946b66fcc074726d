package lsp_test

import (
	"testing"

	"go.lsp.dev/protocol"
)

func TestWorkspaceSymbol(t *testing.T) {
	fake := newFake()
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	var syms []protocol.SymbolInformation
	c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, &syms)
	if len(syms) != 1 {
		t.Fatalf("symbols = %+v", syms)
	}
	s := syms[0]
	if s.Name != "symbol for deploy" || s.Kind != protocol.SymbolKindString ||
		s.ContainerName != "episode-2 · bob · chat.history · conv-1" ||
		s.Location.URI != "file:///fake/run/episode-2/bob/chat.history" ||
		s.Location.Range.Start != (protocol.Position{Line: 3, Character: 40}) ||
		s.Location.Range.End != (protocol.Position{Line: 3, Character: 52}) {
		t.Errorf("symbol = %+v", s)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
