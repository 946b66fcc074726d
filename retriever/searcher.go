package retriever

// This file holds the retriever's side of a query: its terms looked up and
// its agent made a partition, and run, which asks the engine for the best
// pieces under the request's rules and gives each its file.

import (
	"context"
	"fmt"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// newQuery looks up the terms of text and the agent searched, whose id is
// the engine's partition (spec §6: statistics over the agents searched).
// The caller holds the read lock. An agent the index does not know leaves
// the query without terms.
func newQuery(c *corpus.State, text, agent string) (bm25.Query, error) {
	names := bm25.Terms(text)
	if len(names) > MaxQueryTerms {
		return bm25.Query{}, &FieldError{"query", fmt.Sprintf("%d terms", len(names)), fmt.Sprintf("at most %d distinct terms", MaxQueryTerms)}
	}
	q := bm25.Query{Part: -1, Terms: c.Dict.Lookup(names)}
	if agent != "" {
		a, ok := c.AgentIDs[agent]
		if !ok {
			return bm25.Query{Part: -1}, nil
		}
		q.Part = int(a)
	}
	return q, nil
}

// run scores the query over every segment under the request's rules, keeps
// the best k pieces with distinct texts, equal scores in location order, and
// gives each its file. The caller holds the read lock.
func (ix *Index) run(ctx context.Context, q bm25.Query, f *filter) ([]hit, error) {
	outer, _, err := ix.runNested(ctx, q, f, nil)
	return outer, err
}

// runNested is run under two filters in one walk of the lists
// (bm25.Searcher.SearchNested): outer's hits and inner's (nil: none), where
// inner lets in no piece that outer keeps out. The caller holds the read
// lock.
func (ix *Index) runNested(ctx context.Context, q bm25.Query, outer, inner *filter) (outerHits, innerHits []hit, err error) {
	q.Groups = func(a, b uint32) int { return fileOrder(&ix.state, a, b) }
	// A file's pieces are added in location order, and segments merged in
	// order (TestPiecesInLocationOrder).
	q.DocOrder = true
	var innerF bm25.Filter
	if inner != nil {
		innerF = &evidenceFilter{ix: ix, f: inner, agent: q.Part}
	}
	o, in, err := ix.searcher.SearchNested(ctx, ix.state.Postings, &ix.state.Stats, q, &evidenceFilter{ix: ix, f: outer, agent: q.Part}, innerF, func(a, b bm25.Hit) bool { return locationBefore(&ix.state, a, b) })
	if err != nil {
		return nil, nil, err
	}
	return ix.hitsOf(o), ix.hitsOf(in), nil
}

// hitsOf gives the engine's hits their segments and files.
func (ix *Index) hitsOf(found []bm25.Hit) []hit {
	if len(found) == 0 {
		return nil
	}
	hits := make([]hit, len(found))
	for i, h := range found {
		hits[i] = hit{score: h.Score, seg: ix.state.Segments[h.Seg], doc: h.Doc, tag: h.Group, fs: ix.state.File(h.Group)}
	}
	return hits
}

// hit is a scored piece, with its segment and file.
type hit struct {
	score float64
	seg   *corpus.Segment
	doc   uint32
	tag   uint32 // the file id
	fs    *corpus.File
}
