package retriever

// This file holds the order of hits of equal score: location order.

import "runls/retriever/internal/bm25"

// locationBefore orders pieces of equal score by location: episode number,
// path relative to the run folder byte-wise, line, piece. The scoring paths
// ask it only for hits of equal score; a hit's group is its file id.
func (ix *Index) locationBefore(a, b bm25.Hit) bool {
	fa, fb := ix.byID[a.Group], ix.byID[b.Group]
	if c := compareEpisodeNumbers(fa.epNum, fb.epNum); c != 0 {
		return c < 0
	}
	if fa.rel != fb.rel {
		return fa.rel < fb.rel
	}
	sa, sb := ix.segments[a.Seg], ix.segments[b.Seg]
	la, lb := sa.lineOf(a.Doc), sb.lineOf(b.Doc)
	if la != lb {
		return la < lb
	}
	return sa.startOf(a.Doc) < sb.startOf(b.Doc)
}
