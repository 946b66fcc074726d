package bm25

// This file holds MaxScore with block-max bounds, document at a time, and
// single, one list scored a block at a time.

import (
	"cmp"
	"slices"
)

// maxScore finds the segment's documents that can enter the top k, document at
// a time: terms whose bounds together cannot reach the threshold are not
// walked, only looked up for documents the other terms find.
func (sr *Searcher) maxScore(s segRef, cs []termCursor, avgdl float64, q *query, f Filter, top *topK) {
	switch len(cs) {
	case 0:
		return
	case 1:
		sr.single(s, &cs[0], avgdl, q, f, top)
		return
	}
	slices.SortFunc(cs, func(a, b termCursor) int { return cmp.Compare(a.ub, b.ub) })
	runs := newDocCursor(f, s)
	innerRuns, nested := top.innerCursor(s)
	cum := slices.Grow(q.cum[:0], len(cs))[:len(cs)]
	q.cum = cum
	// A score is summed in query term order, whatever order the cursors are
	// in, so that equal documents get equal scores to the last bit.
	contrib := slices.Grow(q.contrib[:0], len(q.terms))[:len(q.terms)]
	q.contrib = contrib
	// cum[i] bounds what cursors 0..i add to a document: of a split term's two
	// lists only the larger bound counts, as a document is in one of them.
	clear(q.best)
	sum := 0.0
	for i, c := range cs {
		sum += max(c.ub-q.best[c.qi], 0)
		q.best[c.qi] = max(q.best[c.qi], c.ub)
		cum[i] = sum
	}
	for {
		theta := top.threshold() * (1 - PruneSlack)
		e := 0
		for e < len(cs) && cum[e] < theta {
			e++
		}
		before := 0.0 // the most the non-essential terms can add
		if e > 0 {
			before = cum[e-1]
		}
		if e == len(cs)-1 {
			// One essential term: skip its blocks that cannot reach the threshold.
			c := &cs[e]
			for c.it.valid && c.it.si < len(c.it.skips) {
				blk := c.it.skips[c.it.si]
				if ScoreBound(c.idf, blk.maxImpact, c.scale)+before >= theta {
					break
				}
				c.it.advance(blk.lastDoc + 1)
			}
		}
		// The next candidate: the smallest doc of the essential terms.
		d, any := uint32(0), false
		for i := e; i < len(cs); i++ {
			if cs[i].it.valid && (!any || cs[i].it.doc < d) {
				d, any = cs[i].it.doc, true
			}
		}
		if !any {
			return
		}
		if runs.rejects(d) {
			// The filter rejects d's whole group run: the essential lists
			// jump past it, over whole blocks (a request whose rules leave
			// most files out).
			for i := e; i < len(cs); i++ {
				if cs[i].it.valid {
					cs[i].it.advance(runs.next)
				}
			}
			continue
		}
		if nested && cum[len(cs)-1] < top.floor(true) && innerRuns.rejects(d) {
			// No document here can enter the outer heap, and the inner
			// filter rejects d's whole group run: the same jump (a nested
			// search without a context, its record files).
			for i := e; i < len(cs); i++ {
				if cs[i].it.valid {
					cs[i].it.advance(innerRuns.next)
				}
			}
			continue
		}
		if !s.Dead(d) {
			clear(contrib)
			partial := 0.0
			dl := uint32(s.Len(d))
			for i := e; i < len(cs); i++ {
				if cs[i].it.valid && cs[i].it.doc == d {
					v := Score(cs[i].idf, cs[i].it.tf, dl, avgdl)
					contrib[cs[i].qi] = v
					partial += v
				}
			}
			// Filter only documents that can still enter, then look the other
			// terms up while the document can still reach the threshold.
			pruned := partial+before < theta
			var tag uint32
			if !pruned {
				var ok bool
				ok, tag = runs.at(d)
				pruned = !ok
			}
			for j := e - 1; j >= 0 && !pruned; j-- {
				if partial+cum[j] < theta {
					pruned = true
					break
				}
				if contrib[cs[j].qi] != 0 {
					continue // found in the term's other list
				}
				if tf := cs[j].lookup(d); tf > 0 {
					v := Score(cs[j].idf, tf, dl, avgdl)
					contrib[cs[j].qi] = v
					partial += v
				}
			}
			if !pruned {
				top.offer(Hit{Score: SumInOrder(contrib), Seg: s.n, Doc: d, Group: tag, seg: s.Segment})
			}
		}
		for i := e; i < len(cs); i++ {
			if cs[i].it.valid && cs[i].it.doc == d {
				cs[i].it.next()
			}
		}
	}
}

// single scores one term's postings in a tight loop, skipping the blocks
// whose bound cannot reach the threshold.
func (sr *Searcher) single(s segRef, c *termCursor, avgdl float64, q *query, f Filter, top *topK) {
	norms := q.norms
	runs := newDocCursor(f, s)
	ahead := newDocCursor(f, s) // a block ahead of runs (see prefill)
	// The inner filter's cursors (a nested search): a document below the
	// outer heap's threshold only the inner heap may take.
	innerAhead, nested := top.innerCursor(s)
	innerRuns, _ := top.innerCursor(s)
	theta, outerTheta := top.floor(false), top.floor(true)
	var dls [skipEvery]uint16
	var innerOut [skipEvery]bool   // of an inner heap's block, the documents its filter rejects
	var keptDocs [skipEvery]uint32 // of a block, the documents that reach the threshold
	var keptScores [skipEvery]float64
	for si := range c.blocks() {
		from, end, prev, ub := c.block(si)
		if ub < theta || ahead.rejectsThrough(c.firstDoc(si, from, prev), c.lastDoc(si)) {
			continue
		}
		if nested && ub < outerTheta && innerAhead.rejectsThrough(c.firstDoc(si, from, prev), c.lastDoc(si)) {
			continue // below the outer heap's threshold, of groups the inner filter rejects whole
		}
		// The block whole, then its documents' lengths in a loop of
		// independent loads (their cache misses overlap), then the scores.
		q.blockDocs, q.blockTFs = decodeFrom(c.it.p[from:end], prev, q.blockDocs[:0], q.blockTFs[:0])
		// A block below the outer heap's threshold: its documents of groups
		// the inner filter rejects are left before their lengths are read.
		innerOnly := nested && ub < outerTheta
		for j, d := range q.blockDocs {
			if innerOut[j] = innerOnly && innerRuns.rejects(d); !innerOut[j] {
				dls[j] = s.lengthAt(c.dls, si*skipEvery+j, d)
			}
		}
		// The scores, the documents that reach the threshold kept (most of
		// a frequent word's do not), then the keys of those the heap would
		// take, in a loop of independent loads (the heap reads a hit's key as
		// it takes it: touchKeys), then the offers.
		n := 0
		for j, d := range q.blockDocs {
			score := ScoreNorm(c.idf, q.blockTFs[j], norms.Of(dls[j], avgdl))
			keptDocs[n], keptScores[n] = d, score
			n += b2i(!innerOut[j] && score >= theta)
		}
		q.touched += top.touchKeys(s.Segment, keptDocs[:n], keptScores[:n], theta)
		for j, d := range keptDocs[:n] {
			if score := keptScores[j]; score >= theta {
				if nested && !innerOnly && score < outerTheta && innerRuns.rejects(d) {
					continue
				}
				if ok, tag := runs.at(d); ok {
					top.offer(Hit{Score: score, Seg: s.n, Doc: d, Group: tag, seg: s.Segment})
					theta, outerTheta = top.floor(false), top.floor(true)
				}
			}
		}
	}
}
