package retriever

import (
	"slices"
)

// Every update that changes files adds a segment, and a file's pending tail
// leaves dead pieces behind each time it is read again. So that a long session
// keeps a handful of segments, small segments are merged, and a segment that
// is mostly dead is written again without its dead pieces.
const (
	// smallSegmentDocs is the size below which a segment counts as small.
	smallSegmentDocs = 1 << 16
	// mergeSmallAt is how many small segments are merged at once.
	mergeSmallAt = 8
)

// compact merges segments as the policy above says. It runs at the end of an
// update, under the write lock, when no read of a file is under way: the
// file states it rewrites are the current ones, and no update holds an older.
func (ix *Index) compact() {
	small := mergeCandidates(ix.segments)
	if len(small) == 0 {
		return
	}
	merged, moved := mergeSegments(small, ix.tune.layerMin)
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
	if merged.docs() > 0 {
		keep = append(keep, merged)
	}
	ix.segments = keep
	for _, fs := range ix.files {
		ix.moveRefs(fs, gone, merged)
	}
}

// mergeCandidates returns the segments to merge now (none: not yet): the
// small ones and those mostly dead, once there are mergeSmallAt of them. A
// small segment that would be most of the merge (four times the others
// together) is left out while it is not mostly dead: rewritten to take in a
// few appended pieces every few updates, it would cost each of those
// updates tens of milliseconds; left out, it is merged once the others have
// grown to a fair share of it.
func mergeCandidates(segments []*segment) []*segment {
	var small []*segment
	total := 0
	for _, s := range segments {
		if s.docs() < smallSegmentDocs || s.ndead*2 > s.docs() {
			small = append(small, s)
			total += s.docs()
		}
	}
	for len(small) >= mergeSmallAt {
		big := 0
		for i, s := range small {
			if s.docs() > small[big].docs() {
				big = i
			}
		}
		s := small[big]
		if s.ndead*2 > s.docs() || s.docs() <= 4*(total-s.docs()) {
			return small
		}
		small = slices.Delete(small, big, big+1)
		total -= s.docs()
	}
	return nil
}

// moveRefs points a file's ranges and tail docs at the merged segment.
func (ix *Index) moveRefs(fs *fileState, gone map[*segment][]uint32, merged *segment) {
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
	b := newBuilder(layerMin)
	moved := make([][]uint32, len(src))
	raw := &b.seg
	for i, s := range src {
		moved[i] = make([]uint32, s.docs())
		for d := uint32(0); d < uint32(s.docs()); d++ {
			if s.isDead(d) {
				continue
			}
			n := uint32(len(raw.hash))
			moved[i][d] = n + 1
			raw.hash = append(raw.hash, s.hash[d])
			raw.file = append(raw.file, s.fileOf(d))
			raw.line = append(raw.line, s.lineOf(d))
			raw.start = append(raw.start, s.startOf(d))
			raw.blen = append(raw.blen, s.blenOf(d))
			raw.dl = append(raw.dl, s.dlOf(d))
			raw.conv = append(raw.conv, s.convOf(d))
			raw.flags = append(raw.flags, s.flags[d])
			if t, ok := s.masked[d]; ok {
				if raw.masked == nil {
					raw.masked = map[uint32]string{}
				}
				raw.masked[n] = t
			}
			if h, ok := s.toldHash[d]; ok {
				if raw.toldHash == nil {
					raw.toldHash = map[uint32]uint64{}
				}
				raw.toldHash[n] = h
			}
		}
	}
	// The terms of all sources, ascending; each term's postings in source
	// order are in new doc order.
	var terms []uint32
	for _, s := range src {
		terms = append(terms, s.terms...)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	var global []uint32
	for _, t := range terms {
		local := uint64(len(global))
		before := len(b.log)
		for i, s := range src {
			ti := s.termIndex(t)
			if ti < 0 {
				continue
			}
			s.eachPosting(ti, func(doc, tf uint32) {
				if n := moved[i][doc]; n != 0 {
					b.log = append(b.log, local<<logTermShift|uint64(n-1)<<logTFBits|uint64(tf))
				}
			})
		}
		if len(b.log) > before {
			global = append(global, t)
			b.count = append(b.count, uint32(len(b.log)-before))
		}
	}
	return b.finish(global), moved
}
