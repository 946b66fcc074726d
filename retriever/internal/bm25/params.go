package bm25

// This file holds the BM25 parameters and arithmetic (idf, term score,
// length norms) and the bounds that pruning takes from impacts.

import "math"

// BM25 parameters, Lucene's (spec §6); retriever's limits name them too.
const (
	K1 = 1.2
	B  = 0.75
)

// IDF is Lucene's: ln(1 + (N - n + 0.5) / (n + 0.5)).
func IDF(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Score is the classic term score, with the constant factor k1+1 kept.
func Score(idf float64, tf, dl uint32, avgdl float64) float64 {
	return ScoreNorm(idf, tf, LengthNorm(dl, avgdl))
}

// LengthNorm is BM25's k1·(1 − b + b·|d|/avgdl), which depends on the document only.
func LengthNorm(dl uint32, avgdl float64) float64 {
	return K1 * (1 - B + B*float64(dl)/avgdl)
}

// ScoreNorm is Score with the document's LengthNorm given: the same operations in
// the same order, so the same score to the last bit.
func ScoreNorm(idf float64, tf uint32, norm float64) float64 {
	t := float64(tf)
	return idf * t * (K1 + 1) / (t + norm)
}

// NormTable holds LengthNorm for the short documents (nearly all), so that
// scoring a posting costs one division.
type NormTable [1024]float64

func NewNormTable(avgdl float64) *NormTable {
	var t NormTable
	for dl := range t {
		t[dl] = LengthNorm(uint32(dl), avgdl)
	}
	return &t
}

func (t *NormTable) Of(dl uint16, avgdl float64) float64 {
	if int(dl) < len(t) {
		return t[dl]
	}
	return LengthNorm(uint32(dl), avgdl)
}

// ScoreBound bounds the term's score in any document whose impact (at the
// segment's refAvgdl) is at most maxImpact; scale is ImpactScale's. The
// bound is exact for the document of largest impact when the index's average
// document length is the segment's.
func ScoreBound(idf float64, maxImpact float32, scale float64) float64 {
	return idf * (K1 + 1) * float64(maxImpact) * scale
}

// ImpactScale makes impacts taken at ref bound scores at avgdl. With
// n = k1(1-b) + k1·b·dl/avg, the score is idf(k1+1)·tf/(tf+n). When avgdl ≥
// ref, tf + n(avgdl) ≥ (ref/avgdl)·(tf + n(ref)), so the score is at most
// avgdl/ref times the impact's; when avgdl < ref, n grows and the score is
// at most the impact's.
func ImpactScale(avgdl, ref float64) float64 {
	return max(1, avgdl/ref)
}

// SumInOrder adds a document's term scores in query term order: every path that
// scores a document adds the same numbers in the same order, so equal documents get
// equal scores to the last bit whichever path found them.
func SumInOrder(contrib []float64) float64 {
	score := 0.0
	for _, v := range contrib {
		score += v
	}
	return score
}

// PruneSlack keeps pruning safe from rounding: sums of the same terms added
// in another order may differ in their last bits, and a document that ties the
// threshold can still enter by location order.
const PruneSlack = 1e-9
