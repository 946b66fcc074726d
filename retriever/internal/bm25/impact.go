package bm25

// This file holds the impact cut: how a term with many postings is split into
// a high list and a low one.

// A term with many postings in a segment keeps them as two lists, each in
// document order with its own skips: the few with the highest impact (large tf
// in a short document) and the rest. A query scores the high list first, as it
// does a rare term's, and the threshold that sets leaves the low list's
// blocks out of reach, where in one list the best documents are spread over
// most blocks and keep them all in reach. Each posting is in one list only.
const (
	// DefaultLayerMin is the fewest postings a term must have to be split.
	DefaultLayerMin = 128
	// layerFraction: about 1/layerFraction of a term's postings are high.
	layerFraction = 32
	// impactBuckets is how finely impacts are told apart when choosing the cut.
	impactBuckets = 1 << 12
)

// layers says where a split term's low list begins, and bounds each list.
type layers struct {
	split     uint32 // byte offset of the low list in the term's postings
	skipSplit uint32 // index of the low list's first skip in the term's skips
	maxTF     [2]uint16
	maxImpact [2]float32
	// dl holds the length of each document of the high list, in its order
	// (longMark: see the segment's dl): a query scores most of the high
	// list's documents, and reading their lengths here, in order, spares a
	// cache miss each in the segment's column. A byte a high posting.
	dl []uint8
}

// impactCut chooses, for a term with many postings, the impact bucket from
// which its postings are high: impact is the term's bm25 in the document
// without idf, at the batch's average document length. The split needs no more
// than an order (the query's own bounds keep it exact), so the batch's
// average stands in for the index's.
type impactCut struct {
	layerMin int
	dl       []uint16
	avgdl    float64
	norms    []float64 // LengthNorm by document length, for the lengths in the batch
	once     []uint16  // the bucket of tf 1 by document length: most entries'
	impact1  []float64 // the impact of tf 1 by document length (appendList), likewise
	hist     []uint32
	buckets  []uint16 // of the last term cut, by entry
}

// side selects the entries of one list of a split term: those whose impact
// bucket is at least from (high) or below it; from < 0 takes every entry.
type side struct {
	cut  *impactCut
	from int
	high bool
}

// takes reports whether the side takes the j-th entry of the term last cut.
func (sd side) takes(j int) bool {
	return sd.from < 0 || (int(sd.cut.buckets[j]) >= sd.from) == sd.high
}

func newImpactCut(dl []uint16, layerMin int) *impactCut {
	total, longest := 0, uint16(0)
	for _, l := range dl {
		total += int(l)
		longest = max(longest, l)
	}
	c := &impactCut{dl: dl, layerMin: layerMin, norms: make([]float64, int(longest)+1), hist: make([]uint32, impactBuckets)}
	c.avgdl = max(float64(total)/float64(max(len(dl), 1)), 1)
	c.once = make([]uint16, len(c.norms))
	c.impact1 = make([]float64, len(c.norms))
	for l := range c.norms {
		c.norms[l] = LengthNorm(uint32(l), c.avgdl)
		c.once[l] = uint16(impactBucket(1, c.norms[l]))
		c.impact1[l] = impactOf(1, c.norms[l])
	}
	return c
}

// impactOf is a posting's impact: tf/(tf + norm), its bm25 without idf
// and k1+1.
func impactOf(tf, norm float64) float64 { return tf / (tf + norm) }

// bucket is the impact bucket of a log entry: tf/(tf + norm) in (0, 1).
func (c *impactCut) bucket(e uint64) int {
	doc := uint32(e>>logTFBits) & maxBuilderDocs
	if tf := e & (1<<logTFBits - 1); tf != 1 {
		return impactBucket(float64(tf), c.norms[c.dl[doc]])
	}
	return int(c.once[c.dl[doc]])
}

func impactBucket(tf, norm float64) int {
	return min(int(impactOf(tf, norm)*impactBuckets), impactBuckets-1)
}

// high returns the bucket from which a term's entries are high, or -1 when
// the term is not to be split: too few postings, or no cut that leaves
// about 1/layerFraction of them high (a term whose documents are all alike).
func (c *impactCut) high(entries []uint64) int {
	if len(entries) < c.layerMin {
		return -1
	}
	c.buckets = c.buckets[:0]
	lo, hi := impactBuckets, 0
	for _, e := range entries {
		b := c.bucket(e)
		c.buckets = append(c.buckets, uint16(b))
		c.hist[b]++
		lo, hi = min(lo, b), max(hi, b)
	}
	// Only the buckets between the lowest and highest taken are counted,
	// and cleared for the next term: most terms are short.
	defer clear(c.hist[lo : hi+1])
	want := len(entries) / layerFraction
	n := 0
	for b := hi; b > lo; b-- {
		n += int(c.hist[b])
		if n >= want {
			if n > len(entries)/2 {
				return -1
			}
			return b
		}
	}
	return -1
}
