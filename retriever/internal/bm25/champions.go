package bm25

// This file holds the champion blocks: each frequent term's best blocks,
// scored whole before MaxScore, and scoreWhole.

// championBlocks is how many of a frequent term's best blocks (by their
// score bound, over all segments) are scored whole before MaxScore.
const championBlocks = 2

// champions scores, in full, the documents of each frequent term's best blocks:
// they hold its best documents, so the threshold is near its final value
// before MaxScore walks anything, and MaxScore skips the blocks (and terms)
// that cannot reach it. Documents are offered again later; that changes nothing.
func (sr *Searcher) champions(later []pendingSegment, avgdl float64, q *query, f Filter, top *topK) {
	type block struct {
		bound float64
		p, c  int // segment in later, cursor in rest
		b     int // block; -1: the whole list (no skips)
	}
	contrib := make([]float64, len(q.terms))
	var others []termCursor
	for qi := range q.terms {
		// The best few blocks, kept while scanning: a frequent term has
		// thousands of them, and most queries need none (the threshold is
		// already out of the terms' reach).
		var best [championBlocks]block
		n := 0
		keep := func(bl block) {
			if n < championBlocks {
				best[n] = bl
				n++
			} else if bl.bound > best[n-1].bound {
				best[n-1] = bl
			} else {
				return
			}
			for k := n - 1; k > 0 && best[k].bound > best[k-1].bound; k-- {
				best[k], best[k-1] = best[k-1], best[k]
			}
		}
		theta := top.threshold() * (1 - PruneSlack)
		for p, ps := range later {
			if q.reach(ps.rest, nil) < theta { // no document of the segment can enter
				continue
			}
			for c := range ps.rest {
				cur := &ps.rest[c]
				if cur.qi != qi {
					continue
				}
				if len(cur.it.skips) == 0 {
					if len(ps.rest) == 1 {
						// The segment's one list left, of one block: single
						// scores it with its lengths and keys read side by
						// side, the segments of the highest bounds first,
						// where a champion's documents were each scored
						// whole, then again by single (a rare word's
						// query: two of its segments, cold, twice).
						continue
					}
					keep(block{cur.ub, p, c, -1})
				}
				for b, e := range cur.it.skips {
					if bound := ScoreBound(cur.idf, e.maxImpact, cur.scale); n < championBlocks || bound > best[n-1].bound {
						keep(block{bound, p, c, b})
					}
				}
			}
		}
		for _, bl := range best[:n] {
			if bl.bound < top.threshold()*(1-PruneSlack) {
				break
			}
			ps := later[bl.p]
			cur := ps.rest[bl.c]
			it := cur.it
			it.rewind()
			end := len(it.p)
			if bl.b >= 0 {
				if bl.b > 0 {
					prev := it.skips[bl.b-1]
					it.pos, it.last, it.si = int(prev.end), prev.lastDoc, bl.b
				}
				end = int(it.skips[bl.b].end)
			}
			// The block's documents come in increasing order: one fresh
			// iterator per other list looks them all up.
			others = others[:0]
			for _, c := range ps.all {
				if c.qi != cur.qi {
					c.it.rewind()
					others = append(others, c)
				}
			}
			k := max(bl.b, 0) * skipEvery // the block's first place in its list
			runs := runCursor{groups: ps.s.groups}
			for ; it.pos < end && it.next(); k++ {
				dl := ps.s.lengthAt(cur.dls, k, it.doc)
				sr.scoreWhole(ps.s, &cur, it.tf, dl, others, &runs, it.doc, avgdl, q, f, top, contrib)
			}
		}
	}
}

// scoreWhole scores document d, of length dl, found with tf in the list of c, with every
// other query term of its segment (looked up in others, and its group in
// runs, which are asked for documents in increasing order) and offers it.
func (sr *Searcher) scoreWhole(s segRef, c *termCursor, tf uint32, dl uint16, others []termCursor, runs *runCursor, d uint32, avgdl float64, q *query, f Filter, top *topK, contrib []float64) {
	ok, tag := accept(f, s, runs, d)
	if !ok {
		return
	}
	clear(contrib)
	norm := q.norms.Of(dl, avgdl)
	contrib[c.qi] = ScoreNorm(c.idf, tf, norm)
	for i := range others {
		o := &others[i]
		if contrib[o.qi] != 0 {
			continue // found in the term's other list
		}
		if tf := o.lookup(d); tf > 0 {
			contrib[o.qi] = ScoreNorm(o.idf, tf, norm)
		}
	}
	top.offer(Hit{Score: SumInOrder(contrib), Seg: s.n, Doc: d, Group: tag, seg: s.Segment})
}
