package retriever

// This file holds the thresholds that choose between equivalent ways of
// indexing and searching.

// tuning holds the thresholds that choose between ways of indexing and
// searching that give the same answers; tests vary them so that every way
// is checked against scoring every posting.
type tuning struct {
	// layerMin is the fewest postings a term must have in a batch to be
	// split into high and low lists.
	layerMin int
	// exhaustiveMax is the most postings bytes the query's terms may have
	// in a segment to be scored every posting: for rare terms of about the
	// same frequency a tight loop over all their postings beats any pruning.
	exhaustiveMax int
	// exhaustiveSpread is how many times the rarest term's postings the
	// most frequent one's may hold for them to be alike.
	exhaustiveSpread int
	// prefillMax is the most postings bytes a list may have in a segment to
	// be prefilled: rare enough that scoring each of its pieces whole is cheap.
	prefillMax int
	// parallelMin is the fewest postings bytes a query's terms must have
	// over all segments for the segments to be searched in two halves side
	// by side: below it, a second goroutine costs more than it saves.
	parallelMin int
}

func defaultTuning() tuning {
	return tuning{layerMin: defaultLayerMin, exhaustiveMax: 1 << 14, exhaustiveSpread: 8, prefillMax: 1 << 13, parallelMin: 1 << 17}
}
