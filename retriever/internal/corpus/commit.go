package corpus

// This file holds the commit of a batch: its segment laid out, then made
// visible with the files it read, and the pieces of files read again or
// removed taken out.

import "runls/retriever/internal/bm25"

// LaidOut is a builder's batch made into a segment, with its terms' global
// ids, ready to be committed.
type LaidOut struct {
	Builder *Builder
	Seg     *Segment
	Global  []uint32 // by the builder's term id
}

// LayOut makes the builder's segment: term ids made global under the
// dictionary's lock, then the segment laid out. It takes no other lock, so
// that workers lay their batches out (and the update writes them to the
// cache entry, flush.go) side by side, and searches wait only for commit's
// bookkeeping.
func (c *State) LayOut(b *Builder) *LaidOut {
	global := c.Dict.Assign(b.Terms())
	return &LaidOut{Builder: b, Seg: b.FinishSegment(global), Global: global}
}

// Update is what reading one file produced, to commit.
type Update struct {
	Old, Next *File
	Fresh     bool
	Lo, Hi    uint32 // the file's docs in the builder
	Pending   []PendingDoc
	// Discard: the read failed after it added docs [lo, hi) to the builder;
	// the commit kills them and the file keeps its old state.
	Discard bool
	Agent   uint32
}

// PendingDoc is a tail doc before its segment exists.
type PendingDoc struct {
	Doc   uint32
	Terms []int32
	DL    uint16
}

// Commit makes a batch visible: a laid out segment (or none) with the files
// it read, and the removal of deleted files. The caller holds the write
// lock.
func (c *State) Commit(l *LaidOut, updates []*Update, removed []*File, episodes map[string]bool) {
	var seg *Segment
	var global []uint32
	if l != nil {
		seg, global = l.Seg, l.Global
	}

	c.Commits.Add(1)
	if seg != nil {
		c.SetSegments(append(c.Segments, seg))
		c.Stats.Add(l.Builder.Builder, global)
	}
	for _, u := range updates {
		if u.Discard {
			// A read that failed half-way: its pieces never become evidence.
			if u.Hi > u.Lo {
				c.DropFile(&File{Agent: u.Agent, Ranges: []Range{{Seg: seg, Lo: u.Lo, Hi: u.Hi}}})
			}
			continue
		}
		if u.Old != nil {
			if u.Fresh {
				c.DropFile(u.Old)
			} else {
				c.Retract(u.Old)
			}
		}
		next := u.Next
		if u.Fresh {
			next.Ranges = nil
		}
		if u.Hi > u.Lo {
			next.Ranges = append(next.Ranges, Range{Seg: seg, Lo: u.Lo, Hi: u.Hi})
		}
		var docs []TailDoc
		if len(u.Pending) > 0 {
			docs = make([]TailDoc, len(u.Pending))
		}
		for i, p := range u.Pending {
			terms := make([]uint32, len(p.Terms))
			for j, t := range p.Terms {
				terms[j] = global[t]
			}
			docs[i] = TailDoc{Seg: seg, Doc: p.Doc, Terms: terms, DL: p.DL}
		}
		next.SetTailDocs(docs)
		c.Files[next.Rel] = next
		for int(next.ID) >= len(c.ByID) {
			c.ByID = append(c.ByID, nil)
		}
		c.keys.set(c.ByID[next.ID], next)
		c.ByID[next.ID] = next
	}
	for _, r := range removed {
		c.DropFile(r)
		delete(c.Files, r.Rel)
		c.ByID[r.ID] = nil
		c.keys.remove(r.ID)
	}
	c.keys.place(c)
	if episodes != nil {
		c.Episodes = episodes
	}
}

// Confirm commits fs, a committed file checked the same at time at (unix
// ns), as read then: a version of it whose ReadAt is at, its pieces fs's.
// The cache entry keeps ReadAt as the time its record was last checked
// (the reopen restores it as CheckedAt): a file read within the racy window
// of its time and confirmed since is then not checked again at each
// reopen. The caller holds the write lock; fs no longer committed is left.
func (c *State) Confirm(fs *File, at int64) {
	if c.Files[fs.Rel] != fs {
		return
	}
	n := *fs // fs, committed, is never written: a reader may hold it
	n.ReadAt, n.CheckedAt = at, at
	c.Files[n.Rel] = &n
	c.keys.set(fs, &n)
	c.ByID[n.ID] = &n
}

// Retract drops a file's tail docs, whose terms it kept for the purpose.
func (c *State) Retract(fs *File) {
	for _, td := range fs.TailDocs() {
		c.Stats.Retract(fs.Agent, td.Seg.Segment, td.Doc, td.Terms, td.DL)
	}
}

// DropFile drops every doc of a file.
func (c *State) DropFile(fs *File) {
	for _, r := range fs.Ranges {
		c.Stats.Drop(fs.Agent, r.Seg.Segment, r.Lo, r.Hi)
	}
}

// SetSegments makes segs the index's, and the engine's view of them (the
// same segments, in the same order, which hits and filters name by place).
// The caller holds the write lock.
func (c *State) SetSegments(segs []*Segment) {
	c.Segments = segs
	c.Postings = make([]*bm25.Segment, len(segs))
	for i, s := range segs {
		c.Postings[i] = s.Segment
	}
}

// MergeCandidates returns the segments the engine's policy p merges now, in
// the index's order (none: not yet); with heapOnly, none read back from the
// cache entry's mapping (Segment.Mapped), which a merge whose output
// cannot be written out would copy to the heap.
func (c *State) MergeCandidates(p bm25.MergePolicy, heapOnly bool) []*Segment {
	picked := bm25.MergeCandidates(c.Postings, p, func(i int) bool { return heapOnly && c.Segments[i].Mapped })
	if len(picked) == 0 {
		return nil
	}
	out := make([]*Segment, 0, len(picked))
	for _, s := range c.Segments {
		if len(out) < len(picked) && s.Segment == picked[len(out)] {
			out = append(out, s)
		}
	}
	return out
}
