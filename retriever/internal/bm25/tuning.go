package bm25

// This file holds the thresholds that choose between equivalent ways of
// indexing and searching.

import (
	"math"
	"math/bits"
)

// Tuning holds the thresholds that choose between ways of indexing and
// searching that give the same answers; tests vary them so that every way
// is checked against scoring every posting.
type Tuning struct {
	// LayerMin is the fewest postings a term must have in a batch to be
	// split into high and low lists.
	LayerMin int
	// ExhaustiveMax is the most postings bytes the query's terms may have
	// in a segment (of ScaleDocs documents) to be scored every posting: for
	// rare terms of about the same frequency a tight loop over all their
	// postings beats any pruning.
	ExhaustiveMax int
	// ExhaustiveSpread is how many times the rarest term's postings the
	// most frequent one's may hold for them to be alike.
	ExhaustiveSpread int
	// PrefillMax is the most postings bytes a list may have in a segment
	// (of ScaleDocs documents) to be prefilled: rare enough that scoring
	// each of its documents whole is cheap.
	PrefillMax int
	// ScaleDocs, when set, makes ExhaustiveMax and PrefillMax a segment's
	// of ScaleDocs documents: a segment of n documents takes them times
	// n/ScaleDocs (Limits). A term's postings grow with the documents, so
	// that a segment merged from others chooses about the way they chose:
	// when each had the query's terms within its limit, their sum is about
	// within the merged one's (a merged list may be a few bytes a source
	// longer, its first gaps grown, and the dead documents a merge drops
	// shrink its limit; the answers are the same on every path, only the
	// path may differ). Unset (tests), they are each segment's as they are.
	ScaleDocs int
	// ParallelMin is the fewest postings bytes a query's terms must have
	// over all segments for the segments to be searched in two halves side
	// by side: below it, a second goroutine costs more than it saves.
	ParallelMin int
}

// DefaultTuning returns the thresholds an index uses.
func DefaultTuning() Tuning {
	return Tuning{LayerMin: DefaultLayerMin, ExhaustiveMax: 14 << 10, ExhaustiveSpread: 8, PrefillMax: 7 << 10, ScaleDocs: 1 << 18, ParallelMin: 1 << 17}
}

// The limits were 16 and 8 KiB a segment, whatever its size, when the
// segments were the batches of some 300,000 documents (a generated 1 GB
// run's): 14 and 7 KiB for 2^18 documents are those at 300,000.

// Limits are ExhaustiveMax and PrefillMax for a segment of docs documents.
func (t *Tuning) Limits(docs int) (exhaustiveMax, prefillMax int) {
	if t.ScaleDocs <= 0 {
		return t.ExhaustiveMax, t.PrefillMax
	}
	return scaled(t.ExhaustiveMax, docs, t.ScaleDocs), scaled(t.PrefillMax, docs, t.ScaleDocs)
}

// scoresEvery reports whether a segment of docs documents, in which the
// query's terms hold bytes postings bytes each (by query term; 0: not in
// it), is scored every posting (exhaustive): two terms or more, together
// within ExhaustiveMax, the most frequent within ExhaustiveSpread times the
// rarest.
func (t *Tuning) scoresEvery(docs int, bytes []float64) bool {
	total, least, most, terms := 0, math.MaxInt, 0, 0
	for _, v := range bytes {
		if n := int(v); n > 0 {
			total, least, most, terms = total+n, min(least, n), max(most, n), terms+1
		}
	}
	exhaustiveMax, _ := t.Limits(docs)
	return terms > 1 && total <= exhaustiveMax && most <= t.ExhaustiveSpread*least
}

// scaled is v*docs/per, at most math.MaxInt.
func scaled(v, docs, per int) int {
	hi, lo := bits.Mul64(uint64(max(v, 0)), uint64(max(docs, 0)))
	if hi >= uint64(per) {
		return math.MaxInt
	}
	q, _ := bits.Div64(hi, lo, uint64(per))
	return int(min(q, math.MaxInt))
}
