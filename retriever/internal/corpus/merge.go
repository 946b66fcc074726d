package corpus

// This file holds compaction: the segments the engine's merge policy picks
// (MergeCandidates) merged into one (MergeSegments, which needs no lock: it
// reads what no one changes, and a copy of the sources' dead bits, which
// updates change), and the merge made the index's (Replace, under the write
// lock), the files' references moved to it.

import (
	"slices"

	"runls/retriever/internal/bm25"
)

// DeadBits copies the dead bits of segs, for MergeSegments. The caller holds
// the read lock.
func DeadBits(segs []*Segment) [][]uint64 {
	dead := make([][]uint64, len(segs))
	for i, s := range segs {
		dead[i] = slices.Clone(s.DeadBits())
	}
	return dead
}

// Replace makes merged (MergeSegments of src, nil when every piece was
// dead) the index's in place of src, a run of consecutive segments of the
// index (MergeCandidates), at their place, and points the files' references
// at it; a piece of src that died since the merge copied the dead bits dies
// in merged. It reports false, and changes nothing, when src is no longer
// the index's (its state was forgotten meanwhile). The caller holds the
// write lock, and the update lock: no update is under way, whose file
// states would name pieces of src.
func (c *State) Replace(src []*Segment, merged *Segment, moved [][]uint32) bool {
	gone := make(map[*Segment][]uint32, len(src))
	for i, s := range src {
		gone[s] = moved[i]
	}
	found := 0
	for _, s := range c.Segments {
		if gone[s] != nil {
			found++
		}
	}
	if found != len(src) {
		return false
	}
	for i, s := range src {
		for d, n := range moved[i] {
			if n != 0 && s.Dead(uint32(d)) {
				merged.Kill(n - 1)
			}
		}
	}
	keep := make([]*Segment, 0, len(c.Segments)-len(src)+1)
	for _, s := range c.Segments {
		switch {
		case gone[s] == nil:
			keep = append(keep, s)
		case s == src[0] && merged != nil:
			keep = append(keep, merged)
		}
	}
	c.SetSegments(keep)
	for _, fs := range c.Files {
		c.moveRefs(fs, gone, merged)
	}
	// A commit of the index: its cache entry's writer writes it (a reopen
	// reads the merged segments). It costs what any commit does: a search
	// made across it is made again (freshOnce; hitsOf turned places into
	// segments under the read lock, so it was right, only not known to be),
	// and the memos of failures and facts start over.
	c.Commits.Add(1)
	return true
}

// moveRefs points a file's ranges and tail docs at the merged segment.
func (c *State) moveRefs(fs *File, gone map[*Segment][]uint32, merged *Segment) {
	touched := false
	for _, r := range fs.Ranges {
		if gone[r.Seg] != nil {
			touched = true
			break
		}
	}
	for _, td := range fs.TailDocs() {
		if gone[td.Seg] != nil {
			touched = true
			break
		}
	}
	if !touched {
		return
	}
	var ranges []Range
	for _, r := range fs.Ranges {
		m := gone[r.Seg]
		if m == nil {
			ranges = append(ranges, r)
			continue
		}
		// Live pieces keep their order, so a range stays a range.
		lo, hi := uint32(0), uint32(0)
		for d := r.Lo; d < r.Hi; d++ {
			if n := m[d]; n != 0 {
				if hi == 0 {
					lo = n - 1
				}
				hi = n
			}
		}
		if hi > lo {
			ranges = append(ranges, Range{Seg: merged, Lo: lo, Hi: hi})
		}
	}
	var tail []TailDoc
	for _, td := range fs.TailDocs() {
		m := gone[td.Seg]
		if m == nil {
			tail = append(tail, td)
			continue
		}
		if n := m[td.Doc]; n != 0 {
			td.Seg, td.Doc = merged, n-1
			tail = append(tail, td)
		}
	}
	fs.Ranges = ranges
	fs.SetTailDocs(tail)
}

// MergeSegments writes the pieces of segments live in dead (DeadBits), in
// order, into one. For each source it returns the new id + 1 of each of its
// pieces (0: dead). It returns nil when stop said to stop (bm25.Merge).
func MergeSegments(src []*Segment, dead [][]uint64, layerMin int, stop func() bool) (*Segment, [][]uint32) {
	engine := make([]*bm25.Segment, len(src))
	for i, s := range src {
		engine[i] = s.Segment
	}
	merged, moved := bm25.Merge(engine, dead, layerMin, stop)
	if merged == nil {
		return nil, nil
	}
	var cols RawColumns
	for i, s := range src {
		for d, n := range moved[i] {
			if n != 0 {
				cols.AddFrom(&s.Columns, uint32(d), n-1)
			}
		}
	}
	m := &Segment{Segment: merged}
	m.Narrow(&cols)
	return m, moved
}
