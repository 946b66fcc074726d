package bm25

// This file holds prefill: a segment's rare lists scored first, each document
// whole, so that the threshold they set prunes the frequent terms.

import (
	"cmp"
	"math"
	"slices"
)

// prefillScratch is prefill's buffers.
type prefillScratch struct {
	others              []termCursor
	order, groups, byUB []int
	gub, contrib, bound []float64
	gdense              []*denseTerm
	dense               int // of byUB, the terms with bit sets
}

// pendingSegment is a segment on its way through the steps of run.
type pendingSegment struct {
	s      segRef
	all    []termCursor // every query term in the segment, rarest first
	done   []bool       // terms whose documents were all offered
	budget int          // postings bytes prefill may still walk
	most   int          // Tuning.PrefillMax for the segment
	rest   []termCursor // the terms left for MaxScore
}

// startSegment scores a segment outright when all its query terms are rare
// and alike (every posting), else readies it for the rounds of prefill: its
// terms rarest first.
func (sr *Searcher) startSegment(s segRef, cs []termCursor, avgdl float64, q *query, f Filter, top *topK) (pendingSegment, bool) {
	if len(cs) == 0 || s.Docs() == 0 {
		return pendingSegment{}, false
	}
	// Every posting when the terms are few and alike; with a much more
	// frequent term beside a rare one, the rare one's documents set a threshold
	// that spares walking the frequent one. A term's size is its lists'
	// together; a query of one term is never scored so, as its high list
	// (when split) spares walking its low one.
	clear(q.best)
	for i := range cs {
		q.best[cs[i].qi] += float64(len(cs[i].it.p))
	}
	if sr.Tuning.scoresEvery(s.Docs(), q.best) {
		sr.exhaustive(s, cs, avgdl, q, f, top)
		return pendingSegment{}, false
	}
	// Rarest first; of a split term, the high list (the shorter) first.
	slices.SortFunc(cs, func(a, b termCursor) int {
		return cmp.Or(cmp.Compare(b.idf, a.idf), cmp.Compare(len(a.it.p), len(b.it.p)))
	})
	_, prefillMax := sr.Tuning.Limits(s.Docs())
	return pendingSegment{s: s, all: cs, budget: 2 * min(prefillMax, math.MaxInt/2), most: prefillMax}, true
}

// prefillRound scores whole the documents of the segment's round-th rarest term,
// when it is rare and its documents can still reach the threshold. The later
// steps leave the term out: a document that has it was offered with its full
// score already, and offered again without that term's part it scores lower,
// so it changes nothing (a lower score never displaces the same document, nor
// passes a threshold that its full score did not). The same holds within the
// prefill of the next terms, which leave the done ones out too.
func (sr *Searcher) prefillRound(p *pendingSegment, round int, avgdl float64, q *query, f Filter, top *topK) {
	cs := p.all
	if round >= len(cs) || len(cs) == 1 {
		return
	}
	n := len(cs[round].it.p)
	if n > p.most || n > p.budget {
		return
	}
	// the most a document without a done term can score
	reach := q.reach(cs, func(i int) bool { return !p.done[i] })
	p.done[round] = true
	if reach < top.threshold()*(1-PruneSlack) {
		return // none of the term's documents can enter
	}
	p.budget -= n
	sr.prefill(p.s, cs, round, p.done, avgdl, q, f, top)
}

// prefill scores every document of the list cs[r] in the segment with the
// terms not done (see prefillRound), looked up with fresh iterators as long
// as the document can still reach the threshold. Blocks of cs[r] that cannot
// reach it with the most the other terms add are skipped.
func (sr *Searcher) prefill(s segRef, cs []termCursor, r int, done []bool, avgdl float64, q *query, f Filter, top *topK) {
	pf := &q.pf
	pf.plan(cs, r, done, len(q.terms))
	others, order, groups, gub, gdense, byUB, contrib, bound := pf.others, pf.order, pf.groups, pf.gub, pf.gdense, pf.byUB, pf.contrib, pf.bound
	nGroups := len(groups) - 1
	denseGroups := byUB[:pf.dense]
	rest := SumInOrder(gub) // the most the other terms add to any document
	runs := newDocCursor(f, s)
	// A block ahead of runs: a block whose documents' groups the filter
	// rejects whole is not decoded (without a context, or with a scope,
	// the request's own ranking rejects most files whole). A document is
	// not asked about before it is scored: with a context most are
	// evidence, and asking every one (each new group run a call of the
	// filter) cost such a request a tenth more than it saved.
	ahead := newDocCursor(f, s)
	theta := top.threshold() * (1 - PruneSlack)
	idf := cs[r].idf
	// A block of rare at a time: skipped when it cannot reach the
	// threshold with the most the other terms add, else decoded whole, then
	// its documents whose terms' bounds (without their length) can reach the
	// threshold are kept, then their lengths read in a loop of independent
	// loads (the cache misses overlap, where one at a time each waits for
	// the last), then the rest of the work.
	var batch [skipEvery]struct {
		d, tf, k uint32 // k: the document's place in rare's list
		dl       uint16
	}
	var keptDocs [skipEvery]uint32 // of a batch, the documents that reach the threshold
	var keptScores [skipEvery]float64
	// The inner filter's cursors (a nested search): a document below the
	// outer heap's threshold only the inner heap may take.
	innerAhead, nested := top.innerCursor(s)
	innerRuns, _ := top.innerCursor(s) // asked of a block's documents as its batch is made
	innerLate, _ := top.innerCursor(s) // asked of the batch's documents once scored
	outerTheta := top.floor(true)
	for si := range cs[r].blocks() {
		from, end, prev, rareUB := cs[r].block(si)
		if rareUB+rest < theta || ahead.rejectsThrough(cs[r].firstDoc(si, from, prev), cs[r].lastDoc(si)) {
			continue
		}
		if nested && rareUB+rest < outerTheta && innerAhead.rejectsThrough(cs[r].firstDoc(si, from, prev), cs[r].lastDoc(si)) {
			continue // below the outer heap's threshold, of groups the inner filter rejects whole
		}
		q.blockDocs, q.blockTFs = decodeFrom(cs[r].it.p[from:end], prev, q.blockDocs[:0], q.blockTFs[:0])
		n := 0
		for j, d := range q.blockDocs {
			// The bounds of the terms the document may have, those with bit
			// sets looked up. Without branches: whether a document has a
			// frequent term is a coin toss.
			quick := rareUB + rest
			for _, g := range denseGroups {
				missing := ^gdense[g].bits[d>>6] >> (d & 63) & 1
				quick -= gub[g] * float64(missing)
			}
			batch[n].d, batch[n].tf, batch[n].k = d, q.blockTFs[j], uint32(si*skipEvery+j)
			// Below the outer heap's threshold, a document of a group the
			// inner filter rejects is left before its length is read.
			n += b2i(quick >= theta && (!nested || quick >= outerTheta || !innerRuns.rejects(d)))
		}
		for j := range batch[:n] {
			batch[j].dl = s.lengthAt(cs[r].dls, int(batch[j].k), batch[j].d)
		}
		// The batch's scores first, the documents that reach the threshold
		// as it was at the block's start kept, then the keys of those that
		// the heap would take, in a loop of independent loads (the heap
		// reads a hit's key as it takes it: touchKeys), then the offers,
		// under the threshold as it rises. The threshold only rises, so a
		// document left in the first loop would have been left had the
		// offers come between.
		kept := 0
		for _, b := range batch[:n] {
			d := b.d
			// The most each other term can add to this document: its largest tf
			// at the document's own length, far tighter than its bound over all
			// documents.
			norm := q.norms.Of(b.dl, avgdl)
			partial := ScoreNorm(idf, b.tf, norm)
			left := 0.0
			for g := range nGroups {
				var tf uint16
				if t := gdense[g]; t != nil {
					// The largest tf of the window of documents d is in.
					tf = t.windowMaxTF(d)
				} else {
					for _, i := range order[groups[g]:groups[g+1]] {
						// The largest tf of the block d would be in, read off the skips.
						t := cs[i].maxTF
						if it := &others[i].it; len(it.skips) > 0 {
							it.seek(d)
							if it.si < len(it.skips) {
								t = it.skips[it.si].maxTF
							}
						}
						tf = max(tf, t)
					}
				}
				// A term's lists share its idf: one score for the largest tf.
				bound[g] = ScoreNorm(cs[order[groups[g]]].idf, uint32(tf), norm)
				left += bound[g]
			}
			if partial+left < theta {
				continue
			}
			clear(contrib)
			contrib[cs[r].qi] = partial
			pruned := false
			for _, g := range byUB {
				if partial+left < theta {
					pruned = true
					break
				}
				left -= bound[g]
				for _, i := range order[groups[g]:groups[g+1]] {
					if tf := others[i].lookup(d); tf > 0 {
						v := ScoreNorm(cs[i].idf, tf, norm)
						contrib[cs[i].qi] = v
						partial += v
						break
					}
				}
			}
			if score := SumInOrder(contrib); !pruned && score >= theta {
				keptDocs[kept], keptScores[kept] = d, score
				kept++
			}
		}
		q.touched += top.touchKeys(s.Segment, keptDocs[:kept], keptScores[:kept], theta)
		for j, d := range keptDocs[:kept] {
			// Whether the filter accepts the document last: most documents are, and most
			// fall short of the threshold before.
			score := keptScores[j]
			if score < theta || nested && score < outerTheta && innerLate.rejects(d) {
				continue
			}
			if ok, tag := runs.at(d); ok {
				top.offer(Hit{Score: score, Seg: s.n, Doc: d, Group: tag, seg: s.Segment})
				theta, outerTheta = top.floor(false), top.floor(true)
			}
		}
	}
}

// plan readies prefill's view of the terms other than cs[r] for one
// segment, in pf's buffers (the query's, kept from segment to segment):
// others (cs's cursors, rewound), order and groups (the lists looked up, a
// term's lists together, groups[g] the start of term g's), gub and gdense
// (each term's bound and bit set), byUB (the terms with bit sets first,
// dense of them, then by bound), contrib sized for the query's nTerms
// terms and bound for the other terms.
func (pf *prefillScratch) plan(cs []termCursor, r int, done []bool, nTerms int) {
	others := slices.Grow(pf.others[:0], len(cs))[:len(cs)]
	for i := range cs {
		others[i] = cs[i]
		others[i].it.rewind()
	}
	// The other terms, by query term: the document is in no other list of its
	// own term, and in at most one list of each other term.
	order := pf.order[:0]   // of cs, the lists looked up, a term's lists together
	groups := pf.groups[:0] // start of each term's lists in order
	for i := range cs {
		if i == r || done[i] || cs[i].qi == cs[r].qi || slices.ContainsFunc(order, func(j int) bool { return cs[j].qi == cs[i].qi }) {
			continue
		}
		groups = append(groups, len(order))
		for j := i; j < len(cs); j++ {
			if j != r && !done[j] && cs[j].qi == cs[i].qi {
				order = append(order, j)
			}
		}
	}
	groups = append(groups, len(order))
	nGroups := len(groups) - 1
	// Look the likeliest to add the most up first.
	gub := slices.Grow(pf.gub[:0], nGroups)[:nGroups]
	gdense := slices.Grow(pf.gdense[:0], nGroups)[:nGroups] // a term's bit set, to tell absence cheaply
	clear(gub)
	for g := range nGroups {
		for _, i := range order[groups[g]:groups[g+1]] {
			gub[g] = max(gub[g], cs[i].ub)
			gdense[g] = cs[i].dense
		}
	}
	byUB := slices.Grow(pf.byUB[:0], nGroups)[:nGroups]
	for g := range byUB {
		byUB[g] = g
	}
	// Terms with bit sets first (a lookup costs a bit test), then by bound.
	slices.SortFunc(byUB, func(a, b int) int {
		sparse := func(g int) int {
			if gdense[g] == nil {
				return 1
			}
			return 0
		}
		return cmp.Or(cmp.Compare(sparse(a), sparse(b)), cmp.Compare(gub[b], gub[a]))
	})
	// byUB begins with the terms that have bit sets
	dense := 0
	for dense < nGroups && gdense[byUB[dense]] != nil {
		dense++
	}
	contrib := slices.Grow(pf.contrib[:0], nTerms)[:nTerms]
	bound := slices.Grow(pf.bound[:0], nGroups)[:nGroups]
	pf.others, pf.order, pf.groups, pf.gub, pf.gdense, pf.byUB, pf.contrib, pf.bound = others, order, groups, gub, gdense, byUB, contrib, bound
	pf.dense = dense
}
