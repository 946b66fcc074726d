package retriever

// This file holds the order of hits of equal score: location order.

import (
	"cmp"
	"strings"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// locationBefore orders pieces of equal score by location: episode number,
// path relative to the run folder byte-wise, line, piece. The scoring paths
// ask it only for hits of equal score; a hit's group is its file id.
func locationBefore(c *corpus.State, a, b bm25.Hit) bool {
	if d := fileOrder(c, a.Group, b.Group); d != 0 {
		return d < 0
	}
	sa, sb := c.Segments[a.Seg], c.Segments[b.Seg]
	la, lb := sa.LineOf(a.Doc), sb.LineOf(b.Doc)
	if la != lb {
		return la < lb
	}
	return sa.StartOf(a.Doc) < sb.StartOf(b.Doc)
}

// fileOrder is location order's first keys, which a file's pieces share:
// episode number, then path (0: the same file's, or a file's of the same
// path). It is the engine's GroupOrder: a query whose best pieces tie by
// the thousand (templated log lines) asks it once for the pieces of a file
// in a row, not locationBefore for each. It compares the files' keys'
// places (corpus.State.Key: their order is this one), not the Files: each
// cold File was a cache line of its own and its path another (issue 33).
func fileOrder(c *corpus.State, a, b uint32) int {
	if ka, ok := c.Key(a); ok {
		kb, _ := c.Key(b)
		return cmp.Compare(ka.Place(), kb.Place())
	}
	return fileOrderOf(c.ByID[a], c.ByID[b])
}

// fileOrderOf is fileOrder read from the Files (the keys off).
func fileOrderOf(fa, fb *corpus.File) int {
	if d := corpus.CompareEpisodeNumbers(fa.EpNum(), fb.EpNum()); d != 0 {
		return d
	}
	return strings.Compare(fa.Rel, fb.Rel)
}
