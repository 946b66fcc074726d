package lsp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

// partialFake is a fake engine that can answer while its first index is
// held: its partial answers carry the indexing notice.
type partialFake struct {
	*fakeEngine
	partials chan retriever.Request
}

func (e *partialFake) SearchPartial(ctx context.Context, req retriever.Request) (retriever.Result, error) {
	e.partials <- req
	return retriever.Result{Items: []retriever.Item{}, Notices: []retriever.Notice{
		{Field: retriever.IndexingField, Value: "40%", Message: "partial"}}}, nil
}

func (e *partialFake) SymbolsPartial(ctx context.Context, query string, limit int) (retriever.Result, error) {
	e.partials <- retriever.Request{Query: query}
	conv := "conv-1"
	return retriever.Result{Items: []retriever.Item{{
		Location: retriever.Location{URI: "file:///fake/run/episode-2/alice/alice.history"},
		Text:     "deploy partly", Agent: "alice", Episode: "episode-2", File: "episode-2/alice/alice.history", Conversation: &conv,
	}}, Notices: []retriever.Notice{{Field: retriever.IndexingField, Value: "40%", Message: "partial"}}}, nil
}

// TestSymbolsWhileIndexing: while the first index is built, workspace/symbol
// waits a grace, then answers from the engine's partial symbols, each
// symbol's container saying the answer is partial; once indexed, the
// complete symbols, their containers as always.
func TestSymbolsWhileIndexing(t *testing.T) {
	fake := &partialFake{fakeEngine: newFake(), partials: make(chan retriever.Request, 4)}
	fake.refreshGate = make(chan struct{})
	c := start(t, startOpts{open: func(context.Context, retriever.Options) (lsp.Engine, error) { return fake, nil }})
	c.initialize("/fake/run", false, nil)
	var syms []protocol.SymbolInformation
	c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, &syms)
	if len(fake.partials) != 1 || len(syms) != 1 || syms[0].ContainerName != "episode-2 · alice · alice.history · conv-1 · partial: 40% indexed" {
		t.Fatalf("workspace/symbol while indexing: %+v (%d partial asks), want the partial symbol marked", syms, len(fake.partials))
	}
	<-fake.partials
	close(fake.refreshGate)
	deadline := time.Now().Add(waitTimeout)
	for {
		var syms []protocol.SymbolInformation
		c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"}, &syms)
		if len(fake.partials) == 0 {
			for _, s := range syms {
				if strings.Contains(s.ContainerName, "partial") {
					t.Errorf("workspace/symbol once indexed: %+v, want no partial mark", s)
				}
			}
			break
		}
		<-fake.partials
		if time.Now().After(deadline) {
			t.Fatal("workspace/symbol kept answering partially after indexing ended")
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestSearchWhileIndexing: while the first index is built, run/search waits
// a grace, then answers from the engine's partial search (spec §12); once
// indexed, from its search.
func TestSearchWhileIndexing(t *testing.T) {
	fake := &partialFake{fakeEngine: newFake(), partials: make(chan retriever.Request, 4)}
	fake.refreshGate = make(chan struct{})
	c := start(t, startOpts{open: func(context.Context, retriever.Options) (lsp.Engine, error) { return fake, nil }})
	c.initialize("/fake/run", false, nil)
	var res retriever.Result
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, &res)
	if len(fake.partials) != 1 || len(res.Notices) != 1 || res.Notices[0].Field != retriever.IndexingField {
		t.Fatalf("run/search while indexing: %+v (%d partial searches), want the partial answer", res, len(fake.partials))
	}
	<-fake.partials
	close(fake.refreshGate)
	deadline := time.Now().Add(waitTimeout)
	for {
		var res retriever.Result
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, &res)
		if len(fake.partials) == 0 {
			if len(res.Notices) != 0 || len(res.Items) != 1 {
				t.Errorf("run/search once indexed: %+v, want the engine's complete answer", res)
			}
			break
		}
		<-fake.partials
		if time.Now().After(deadline) {
			t.Fatal("run/search kept answering partially after indexing ended")
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// graceFake is a partialFake with its own grace (retriever.Index.AnswerGrace).
type graceFake struct {
	*partialFake
	grace time.Duration
}

func (e *graceFake) AnswerGrace() time.Duration { return e.grace }

// TestSearchWaitsTheEngineGrace: run/search waits for the first index the
// grace the engine gives (retriever.ReopenGrace for a reopen), not
// retriever.PartialGrace: with an hour's grace it is not answered partially
// after four times PartialGrace, and is answered whole once indexed.
func TestSearchWaitsTheEngineGrace(t *testing.T) {
	fake := &graceFake{partialFake: &partialFake{fakeEngine: newFake(), partials: make(chan retriever.Request, 4)}, grace: time.Hour}
	fake.refreshGate = make(chan struct{})
	c := start(t, startOpts{open: func(context.Context, retriever.Options) (lsp.Engine, error) { return fake, nil }})
	c.initialize("/fake/run", false, nil)
	answered := make(chan retriever.Result, 1)
	go func() {
		var res retriever.Result
		if err := c.call(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, &res); err != nil {
			res.Notices = append(res.Notices, retriever.Notice{Message: err.Error()})
		}
		answered <- res
	}()
	select {
	case res := <-answered:
		t.Fatalf("run/search answered %+v before the engine's grace", res)
	case <-time.After(4 * retriever.PartialGrace):
	}
	close(fake.refreshGate)
	if res := <-answered; len(fake.partials) != 0 || len(res.Notices) != 0 {
		t.Errorf("run/search after the index: %+v (%d partial searches), want the complete answer", res, len(fake.partials))
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestSearchWaitsWithoutPartial: an engine that cannot answer partially is
// asked only once its first index is built, however long that takes.
func TestSearchWaitsWithoutPartial(t *testing.T) {
	fake := newFake()
	fake.refreshGate = make(chan struct{})
	c := start(t, startOpts{open: fake.opener(nil, nil)})
	c.initialize("/fake/run", false, nil)
	answered := make(chan error, 1)
	go func() { answered <- c.call(lsp.MethodRunSearch, map[string]any{"query": "deploy"}, nil) }()
	select {
	case err := <-answered:
		t.Fatalf("run/search answered (%v) while indexing was held, without a partial search", err)
	case <-time.After(2 * time.Second): // four times the grace
	}
	close(fake.refreshGate)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
