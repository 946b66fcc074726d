package retriever

import "runls/retriever/internal/bm25"

// laidOut is a builder's batch made into a segment, with its terms' global
// ids, ready to be committed.
type laidOut struct {
	b      *builder
	seg    *segment
	global []uint32 // by the builder's term id
	ids    int      // one more than the largest of global
}

// layOut makes the builder's segment: term ids made global under the
// dictionary's lock, then the segment laid out. It takes no other lock, so
// that workers lay their batches out side by side, and searches wait only
// for commit's bookkeeping.
func (ix *Index) layOut(b *builder) *laidOut {
	global := ix.globalIDs(b.terms)
	ids := 0
	for _, id := range global {
		ids = max(ids, int(id)+1)
	}
	return &laidOut{b: b, seg: b.finish(global), global: global, ids: ids}
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
		b := l.b
		ix.segments = append(ix.segments, seg)
		for agent, df := range b.agentDF {
			st := &ix.stats[agent]
			st.docs += int64(b.agentDocs[agent])
			st.terms += b.agentLen[agent]
			if len(st.df) < l.ids {
				st.df = append(st.df, make([]uint32, l.ids-len(st.df))...)
			}
			for local, n := range df {
				if n > 0 {
					st.df[global[local]] += n
				}
			}
		}
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

// globalIDs maps a builder's local term ids to the index's.
func (ix *Index) globalIDs(t *bm25.TermTable) []uint32 {
	ids := make([]uint32, t.Len())
	ix.dictMu.Lock()
	defer ix.dictMu.Unlock()
	for i := range ids {
		term := t.Term(int32(i))
		id, ok := ix.dict[string(term)]
		if !ok {
			id = uint32(len(ix.dict))
			ix.dict[string(term)] = id
		}
		ids[i] = id
	}
	return ids
}

// retract drops a file's tail docs, whose terms it kept for the purpose.
func (ix *Index) retract(fs *fileState) {
	st := &ix.stats[fs.agent]
	for _, td := range fs.tailDocs {
		if td.seg.isDead(td.doc) {
			continue
		}
		td.seg.kill(td.doc)
		st.docs--
		st.terms -= int64(td.dl)
		for _, t := range td.terms {
			st.df[t]--
		}
	}
}

// dropFile drops every doc of a file. The df of their terms is found by
// scanning the postings of the segments that hold them.
func (ix *Index) dropFile(fs *fileState) {
	st := &ix.stats[fs.agent]
	var buf [2]list
	for _, r := range fs.ranges {
		s := r.seg
		for i, term := range s.terms {
			// Each of a split term's lists is in piece order on its own.
			for _, l := range s.lists(i, &buf) {
				it := l.it
				it.advance(r.lo)
				for ; it.valid && it.doc < r.hi; it.next() {
					if !s.isDead(it.doc) {
						st.df[term]--
					}
				}
			}
		}
		for d := r.lo; d < r.hi; d++ {
			if !s.isDead(d) {
				s.kill(d)
				st.docs--
				st.terms -= int64(s.dlOf(d))
			}
		}
	}
}
