package retriever

// This file holds the BM25 arithmetic (idf, term score, length norms) and the
// bounds that pruning takes from impacts.

import "math"

// idf is Lucene's: ln(1 + (N - n + 0.5) / (n + 0.5)).
func idf(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25 is the classic term score, with the constant factor k1+1 kept.
func bm25(idf float64, tf, dl uint32, avgdl float64) float64 {
	return bm25n(idf, tf, lengthNorm(dl, avgdl))
}

// lengthNorm is bm25's k1·(1 − b + b·|d|/avgdl), which depends on the piece only.
func lengthNorm(dl uint32, avgdl float64) float64 {
	return K1 * (1 - B + B*float64(dl)/avgdl)
}

// bm25n is bm25 with the piece's lengthNorm given: the same operations in
// the same order, so the same score to the last bit.
func bm25n(idf float64, tf uint32, norm float64) float64 {
	t := float64(tf)
	return idf * t * (K1 + 1) / (t + norm)
}

// normTable holds lengthNorm for the short pieces (nearly all), so that
// scoring a posting costs one division.
type normTable [1024]float64

func newNormTable(avgdl float64) *normTable {
	var t normTable
	for dl := range t {
		t[dl] = lengthNorm(uint32(dl), avgdl)
	}
	return &t
}

func (t *normTable) of(dl uint16, avgdl float64) float64 {
	if int(dl) < len(t) {
		return t[dl]
	}
	return lengthNorm(uint32(dl), avgdl)
}

// scoreBound bounds the term's score in any piece whose impact (at the
// segment's refAvgdl) is at most maxImpact; scale is impactScale's. The
// bound is exact for the piece of largest impact when the index's average
// piece length is the segment's.
func scoreBound(idf float64, maxImpact float32, scale float64) float64 {
	return idf * (K1 + 1) * float64(maxImpact) * scale
}

// impactScale makes impacts taken at ref bound scores at avgdl. With
// n = k1(1-b) + k1·b·dl/avg, the score is idf(k1+1)·tf/(tf+n). When avgdl ≥
// ref, tf + n(avgdl) ≥ (ref/avgdl)·(tf + n(ref)), so the score is at most
// avgdl/ref times the impact's; when avgdl < ref, n grows and the score is
// at most the impact's.
func impactScale(avgdl, ref float64) float64 {
	return max(1, avgdl/ref)
}

// sumInOrder adds a piece's term scores in query term order: every path that
// scores a piece adds the same numbers in the same order, so equal pieces get
// equal scores to the last bit whichever path found them.
func sumInOrder(contrib []float64) float64 {
	score := 0.0
	for _, v := range contrib {
		score += v
	}
	return score
}

// pruneSlack keeps pruning safe from rounding: sums of the same terms added
// in another order may differ in their last bits, and a piece that ties the
// threshold can still enter by location order.
const pruneSlack = 1e-9
