package retriever

// This file holds the order of hits: score first, then location order.

// before orders hits: higher score first, then location order (episode
// number, path relative to the run folder byte-wise, line, piece).
func before(a, b *hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return locationBefore(a, b)
}

func locationBefore(a, b *hit) bool {
	if c := compareEpisodeNumbers(a.fs.epNum, b.fs.epNum); c != 0 {
		return c < 0
	}
	if a.fs.rel != b.fs.rel {
		return a.fs.rel < b.fs.rel
	}
	la, lb := a.seg.lineOf(a.doc), b.seg.lineOf(b.doc)
	if la != lb {
		return la < lb
	}
	return a.seg.startOf(a.doc) < b.seg.startOf(b.doc)
}
