package bm25

// This file holds the thresholds that choose between equivalent ways of
// indexing and searching.

// Tuning holds the thresholds that choose between ways of indexing and
// searching that give the same answers; tests vary them so that every way
// is checked against scoring every posting.
type Tuning struct {
	// LayerMin is the fewest postings a term must have in a batch to be
	// split into high and low lists.
	LayerMin int
	// ExhaustiveMax is the most postings bytes the query's terms may have
	// in a segment to be scored every posting: for rare terms of about the
	// same frequency a tight loop over all their postings beats any pruning.
	ExhaustiveMax int
	// ExhaustiveSpread is how many times the rarest term's postings the
	// most frequent one's may hold for them to be alike.
	ExhaustiveSpread int
	// PrefillMax is the most postings bytes a list may have in a segment to
	// be prefilled: rare enough that scoring each of its documents whole is cheap.
	PrefillMax int
	// ParallelMin is the fewest postings bytes a query's terms must have
	// over all segments for the segments to be searched in two halves side
	// by side: below it, a second goroutine costs more than it saves.
	ParallelMin int
}

// DefaultTuning returns the thresholds an index uses.
func DefaultTuning() Tuning {
	return Tuning{LayerMin: DefaultLayerMin, ExhaustiveMax: 1 << 14, ExhaustiveSpread: 8, PrefillMax: 1 << 13, ParallelMin: 1 << 17}
}
