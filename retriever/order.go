package retriever

// This file holds the order of hits of equal score: location order.

// locationBefore orders pieces of equal score by location: episode number,
// path relative to the run folder byte-wise, line, piece. The scoring paths
// ask it only for hits of equal score; a hit's tag is its file id.
func (ix *Index) locationBefore(a, b hit) bool {
	fa, fb := ix.byID[a.tag], ix.byID[b.tag]
	if c := compareEpisodeNumbers(fa.epNum, fb.epNum); c != 0 {
		return c < 0
	}
	if fa.rel != fb.rel {
		return fa.rel < fb.rel
	}
	la, lb := a.seg.lineOf(a.doc), b.seg.lineOf(b.doc)
	if la != lb {
		return la < lb
	}
	return a.seg.startOf(a.doc) < b.seg.startOf(b.doc)
}
