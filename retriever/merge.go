package retriever

// This file holds compaction: the segments the engine's merge policy picks
// merged into one, and the files' references moved to it.

import "runls/retriever/internal/bm25"

// compact merges segments as bm25.MergeCandidates says. It runs at the end of an
// update, under the write lock, when no read of a file is under way: the
// file states it rewrites are the current ones, and no update holds an older.
// It gives the segments it replaced and their merge (nil when every piece
// was dead), for flushMerged.
func (ix *Index) compact() (merged *segment, replaced []*segment) {
	small := ix.mergeCandidates()
	if len(small) == 0 {
		return nil, nil
	}
	merged, moved := mergeSegments(small, ix.searcher.Tuning.LayerMin)
	gone := make(map[*segment][]uint32, len(small))
	for i, s := range small {
		gone[s] = moved[i]
	}
	var keep []*segment
	for _, s := range ix.segments {
		if gone[s] == nil {
			keep = append(keep, s)
		}
	}
	if merged.Docs() > 0 {
		keep = append(keep, merged)
	}
	ix.setSegments(keep)
	for _, fs := range ix.files {
		ix.moveRefs(fs, gone, merged)
	}
	if merged.Docs() == 0 {
		merged = nil
	}
	return merged, small
}

// moveRefs points a file's ranges and tail docs at the merged segment.
func (c *committed) moveRefs(fs *fileState, gone map[*segment][]uint32, merged *segment) {
	touched := false
	for _, r := range fs.ranges {
		if gone[r.seg] != nil {
			touched = true
			break
		}
	}
	for _, td := range fs.tailDocs {
		if gone[td.seg] != nil {
			touched = true
			break
		}
	}
	if !touched {
		return
	}
	var ranges []docRange
	for _, r := range fs.ranges {
		m := gone[r.seg]
		if m == nil {
			ranges = append(ranges, r)
			continue
		}
		// Live pieces keep their order, so a range stays a range.
		lo, hi := uint32(0), uint32(0)
		for d := r.lo; d < r.hi; d++ {
			if n := m[d]; n != 0 {
				if hi == 0 {
					lo = n - 1
				}
				hi = n
			}
		}
		if hi > lo {
			ranges = append(ranges, docRange{seg: merged, lo: lo, hi: hi})
		}
	}
	var tail []tailDoc
	for _, td := range fs.tailDocs {
		m := gone[td.seg]
		if m == nil {
			tail = append(tail, td)
			continue
		}
		if n := m[td.doc]; n != 0 {
			td.seg, td.doc = merged, n-1
			tail = append(tail, td)
		}
	}
	fs.ranges, fs.tailDocs = ranges, tail
}

// mergeSegments writes the live pieces of segments, in order, into one. For
// each source it returns the new id + 1 of each of its pieces (0: dead).
func mergeSegments(src []*segment, layerMin int) (*segment, [][]uint32) {
	engine := make([]*bm25.Segment, len(src))
	for i, s := range src {
		engine[i] = s.Segment
	}
	merged, moved := bm25.Merge(engine, layerMin)
	var cols rawColumns
	for i, s := range src {
		for d, n := range moved[i] {
			if n != 0 {
				cols.addFrom(&s.pieceColumns, uint32(d), n-1)
			}
		}
	}
	m := &segment{Segment: merged}
	m.narrow(&cols)
	return m, moved
}
