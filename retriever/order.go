package retriever

// This file holds the order of hits of equal score: location order.

import "runls/retriever/internal/bm25"

// locationBefore orders pieces of equal score by location: episode number,
// path relative to the run folder byte-wise, line, piece. The scoring paths
// ask it only for hits of equal score; a hit's group is its file id.
func (c *committed) locationBefore(a, b bm25.Hit) bool {
	fa, fb := c.byID[a.Group], c.byID[b.Group]
	if d := compareEpisodeNumbers(fa.epNum, fb.epNum); d != 0 {
		return d < 0
	}
	if fa.rel != fb.rel {
		return fa.rel < fb.rel
	}
	sa, sb := c.segments[a.Seg], c.segments[b.Seg]
	la, lb := sa.lineOf(a.Doc), sb.lineOf(b.Doc)
	if la != lb {
		return la < lb
	}
	return sa.startOf(a.Doc) < sb.startOf(b.Doc)
}
