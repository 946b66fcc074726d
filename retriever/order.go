package retriever

// This file holds the order of hits of equal score: location order.

import (
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// locationBefore orders pieces of equal score by location: episode number,
// path relative to the run folder byte-wise, line, piece. The scoring paths
// ask it only for hits of equal score; a hit's group is its file id.
func locationBefore(c *corpus.State, a, b bm25.Hit) bool {
	fa, fb := c.ByID[a.Group], c.ByID[b.Group]
	if d := compareEpisodeNumbers(fa.EpNum, fb.EpNum); d != 0 {
		return d < 0
	}
	if fa.Rel != fb.Rel {
		return fa.Rel < fb.Rel
	}
	sa, sb := c.Segments[a.Seg], c.Segments[b.Seg]
	la, lb := sa.LineOf(a.Doc), sb.LineOf(b.Doc)
	if la != lb {
		return la < lb
	}
	return sa.StartOf(a.Doc) < sb.StartOf(b.Doc)
}
