package bm25

// This file holds a query term's cursor over one posting list of a segment.

// list is one posting list of a segment's term: the whole term's, or one of
// its layers (0 high, 1 low).
type list struct {
	it        postingIter
	maxTF     uint16
	maxImpact float32
	// dense is the whole term's bit set, not the list's: a lookup in it
	// finds the document in whichever list holds it (callers look a term up
	// once, whichever of its lists they ask)
	dense *denseTerm
	dls   []uint8 // a high list's lengths (see layers)
}

// termCursor walks one query term's postings in a segment.
type termCursor struct {
	it  postingIter
	idf float64
	ub  float64 // the most this term can add to a document's score
	qi  int     // the term's place in the query
	// maxTF is the term's largest tf in the segment: with a document's length
	// it bounds the term's score in that document
	maxTF uint16
	// dense, for a frequent term, looks it up in a document without decoding
	dense *denseTerm
	scale float64 // ImpactScale of the segment
	dls   []uint8 // a high list's lengths (see layers)
}

// blocks is how many blocks the cursor's list has: its skips' (one block
// when it has none).
func (c *termCursor) blocks() int { return max(len(c.it.skips), 1) }

// block returns the byte range of the list's si-th block, the document before
// it, and the bound of the term's score in its documents.
func (c *termCursor) block(si int) (from, end int, prev uint32, ub float64) {
	from, end, prev, ub = 0, len(c.it.p), ^uint32(0), c.ub
	if si < len(c.it.skips) {
		blk := c.it.skips[si]
		end, ub = int(blk.end), ScoreBound(c.idf, blk.maxImpact, c.scale)
	}
	if si > 0 {
		from, prev = int(c.it.skips[si-1].end), c.it.skips[si-1].lastDoc
	}
	return from, end, prev, ub
}

// firstDoc returns the first document the list's si-th block can hold,
// from the block's start in the list and the document before it (block's
// from and prev): of the first block, its first posting's, read off the
// bytes about to be decoded, so that a filter asked about the block's
// documents is not asked about the segment's first run when none of them
// is in it (each query met that run's file cold in every segment, issue
// 33); of a later block, the document after prev.
func (c *termCursor) firstDoc(si, from int, prev uint32) uint32 {
	if si > 0 || from >= len(c.it.p) {
		return prev + 1
	}
	v, _ := uvarintAt(c.it.p, from)
	return prev + uint32(v>>1)
}

// lastDoc returns the last document of the list's si-th block, or the
// largest document there can be when the list has no skips.
func (c *termCursor) lastDoc(si int) uint32 {
	if si < len(c.it.skips) {
		return c.it.skips[si].lastDoc
	}
	return ^uint32(0) - 1
}

// lookup returns the cursor's term's tf in document d (0: not in it), for documents
// asked in increasing order.
func (c *termCursor) lookup(d uint32) uint32 {
	if c.dense != nil {
		return c.dense.tf(d)
	}
	if c.it.advance(d) && c.it.doc == d {
		return c.it.tf
	}
	return 0
}
