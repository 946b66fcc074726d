package lsp

// This file holds the answers given while the run's first index is built
// (spec §12, issue 33): run/search and workspace/symbol wait for it at most
// retriever.PartialGrace (retriever.ReopenGrace for an index restored from
// its cache entry), then answer from what is indexed so far. A
// run/search result says so with its indexing notice; a symbol, which has
// no place for one, says so in its containerName. The client learns that
// the rest has arrived from the indexing progress's end (and run/info's
// indexing.done), and asks again: docs/partial.md.

import (
	"context"
	"fmt"
	"time"

	"runls/retriever"
)

// partialAsk is a question the engine answers from what is indexed.
type partialAsk = func(PartialSearcher) (retriever.Result, error)

// askPartially asks the engine once its first index is built, or, when
// retriever.PartialGrace has passed first and the engine can answer
// partially, from what is indexed so far (ask); complete otherwise. Without
// an engine the answer is empty.
func (s *server) askPartially(ctx context.Context, complete func(Engine) (retriever.Result, error), ask partialAsk) (retriever.Result, error) {
	g := s.acquire()
	defer g.release()
	if g == nil || g.engine == nil {
		return retriever.Result{}, nil
	}
	ready, err := g.readyWithin(ctx, answerGrace(g.engine))
	if err != nil {
		return retriever.Result{}, err
	}
	if !ready {
		if ps, ok := partialEngine(g.engine); ok {
			res, err := ask(ps)
			if err != nil {
				return retriever.Result{}, requestError(err)
			}
			if _, partial := indexingNotice(res); partial {
				s.logger.Info("answered while indexing")
			}
			return res, nil
		}
		if err := g.waitReady(ctx); err != nil {
			return retriever.Result{}, err
		}
	}
	res, err := complete(g.engine)
	if err != nil {
		return retriever.Result{}, requestError(err)
	}
	return res, nil
}

// answerGrace is how long eng's first index is waited for before a partial
// answer: the engine's own (retriever.Index.AnswerGrace: shorter for an
// index restored from its cache entry), else retriever.PartialGrace.
func answerGrace(eng Engine) time.Duration {
	if c, ok := eng.(*clientRoot); ok {
		eng = c.Engine
	}
	return retriever.GraceOf(eng)
}

// partialEngine is eng's PartialSearcher, with the URIs mapped to the
// client's when eng is wrapped, or false when eng has none.
func partialEngine(eng Engine) (PartialSearcher, bool) {
	if c, ok := eng.(*clientRoot); ok {
		ps, ok := c.Engine.(PartialSearcher)
		if !ok {
			return nil, false
		}
		return clientPartial{c: c, ps: ps}, true
	}
	ps, ok := eng.(PartialSearcher)
	return ps, ok
}

// clientPartial is a wrapped engine's PartialSearcher, its URIs the client's.
type clientPartial struct {
	c  *clientRoot
	ps PartialSearcher
}

func (p clientPartial) SearchPartial(ctx context.Context, req retriever.Request) (retriever.Result, error) {
	return p.c.items(p.ps.SearchPartial(ctx, req))
}

func (p clientPartial) SymbolsPartial(ctx context.Context, query string, limit int) (retriever.Result, error) {
	return p.c.items(p.ps.SymbolsPartial(ctx, query, limit))
}

// indexingNotice is the indexing notice of a result, if it has one.
func indexingNotice(res retriever.Result) (retriever.Notice, bool) {
	for _, n := range res.Notices {
		if n.Field == retriever.IndexingField {
			return n, true
		}
	}
	return retriever.Notice{}, false
}

// partialContainer is a symbol's containerName in a partial answer: the
// share indexed follows the place, so that a list of symbols made from part
// of the run says so on every row (workspace/symbol has no notices).
func partialContainer(container string, n retriever.Notice) string {
	return fmt.Sprintf("%s · partial: %s indexed", container, n.Value)
}
