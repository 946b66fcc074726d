package retriever

// This file holds the commit of a batch: its segment laid out, then made
// visible with the files it read, and the pieces of files read again or
// removed taken out.

import "runls/retriever/internal/bm25"

// laidOut is a builder's batch made into a segment, with its terms' global
// ids, ready to be committed.
type laidOut struct {
	b      *builder
	seg    *segment
	global []uint32 // by the builder's term id
}

// layOut makes the builder's segment: term ids made global under the
// dictionary's lock, then the segment laid out. It takes no other lock, so
// that workers lay their batches out (and the update writes them to the
// cache entry, flush.go) side by side, and searches wait only for commit's
// bookkeeping.
func (c *committed) layOut(b *builder) *laidOut {
	global := c.dict.Assign(b.Terms())
	return &laidOut{b: b, seg: b.finish(global), global: global}
}

// commit makes a batch visible: a laid out segment (or none) with the files
// it read, and the removal of deleted files.
func (ix *Index) commit(l *laidOut, updates []*update, removed []*fileState, episodes map[string]bool) {
	var seg *segment
	var global []uint32
	if l != nil {
		seg, global = l.seg, l.global
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.commits.Add(1)
	if seg != nil {
		ix.setSegments(append(ix.segments, seg))
		ix.stats.Add(l.b.Builder, global)
	}
	for _, u := range updates {
		if u.discard {
			// A read that failed half-way: its pieces never become evidence.
			if u.hi > u.lo {
				ix.dropFile(&fileState{agent: u.agent, ranges: []docRange{{seg: seg, lo: u.lo, hi: u.hi}}})
			}
			continue
		}
		if u.old != nil {
			if u.fresh {
				ix.dropFile(u.old)
			} else {
				ix.retract(u.old)
			}
		}
		next := u.next
		if u.fresh {
			next.ranges = nil
		}
		if u.hi > u.lo {
			next.ranges = append(next.ranges, docRange{seg: seg, lo: u.lo, hi: u.hi})
		}
		next.tailDocs = make([]tailDoc, len(u.pending))
		for i, p := range u.pending {
			terms := make([]uint32, len(p.terms))
			for j, t := range p.terms {
				terms[j] = global[t]
			}
			next.tailDocs[i] = tailDoc{seg: seg, doc: p.doc, terms: terms, dl: p.dl}
		}
		ix.files[next.rel] = next
		for int(next.id) >= len(ix.byID) {
			ix.byID = append(ix.byID, nil)
		}
		ix.byID[next.id] = next
	}
	for _, r := range removed {
		ix.dropFile(r)
		delete(ix.files, r.rel)
		ix.byID[r.id] = nil
	}
	if episodes != nil {
		ix.episodes = episodes
	}
}

// retract drops a file's tail docs, whose terms it kept for the purpose.
func (c *committed) retract(fs *fileState) {
	for _, td := range fs.tailDocs {
		c.stats.Retract(fs.agent, td.seg.Segment, td.doc, td.terms, td.dl)
	}
}

// dropFile drops every doc of a file.
func (c *committed) dropFile(fs *fileState) {
	for _, r := range fs.ranges {
		c.stats.Drop(fs.agent, r.seg.Segment, r.lo, r.hi)
	}
}

// setSegments makes segs the index's, and the engine's view of them (the
// same segments, in the same order, which hits and filters name by place).
// The caller holds the write lock.
func (c *committed) setSegments(segs []*segment) {
	c.segments = segs
	c.postings = make([]*bm25.Segment, len(segs))
	for i, s := range segs {
		c.postings[i] = s.Segment
	}
}

// mergeCandidates returns the segments the engine's policy merges now, in
// the index's order (none: not yet).
func (c *committed) mergeCandidates() []*segment {
	picked := bm25.MergeCandidates(c.postings)
	if len(picked) == 0 {
		return nil
	}
	out := make([]*segment, 0, len(picked))
	for _, s := range c.segments {
		if len(out) < len(picked) && s.Segment == picked[len(out)] {
			out = append(out, s)
		}
	}
	return out
}
