package bm25

// This file holds merging: which segments to merge, and their live documents
// written into one.

import (
	"slices"
)

// Every batch adds a segment, and an owner that adds documents again (a
// changed tail of its input) leaves dead ones behind. So that an index keeps
// a handful of segments, small segments are merged, and a segment that is
// mostly dead is written again without its dead documents.
const (
	// SmallSegmentDocs is the size below which a segment counts as small.
	SmallSegmentDocs = 1 << 16
	// MergeSmallAt is how many small segments are merged at once.
	MergeSmallAt = 8
)

// MergeCandidates returns the segments to merge now (none: not yet): the
// small ones and those mostly dead, once there are MergeSmallAt of them. A
// small segment that would be most of the merge (four times the others
// together) is left out while it is not mostly dead: rewritten to take in a
// few appended documents every few updates, it would cost each of those
// updates tens of milliseconds; left out, it is merged once the others have
// grown to a fair share of it.
func MergeCandidates(segments []*Segment) []*Segment {
	var small []*Segment
	total := 0
	for _, s := range segments {
		if s.Docs() < SmallSegmentDocs || s.DeadCount()*2 > s.Docs() {
			small = append(small, s)
			total += s.Docs()
		}
	}
	for len(small) >= MergeSmallAt {
		big := 0
		for i, s := range small {
			if s.Docs() > small[big].Docs() {
				big = i
			}
		}
		s := small[big]
		if s.DeadCount()*2 > s.Docs() || s.Docs() <= 4*(total-s.Docs()) {
			return small
		}
		small = slices.Delete(small, big, big+1)
		total -= s.Docs()
	}
	return nil
}

// Merge writes the live documents of src, in order, into one segment. For
// each source it returns the new id + 1 of each of its documents (0: dead),
// with which the owner moves its own columns and references. It gathers
// one term's postings at a time (segmentWriter), so that what it holds
// besides the sources is the new segment and the largest term's postings.
func Merge(src []*Segment, layerMin int) (*Segment, [][]uint32) {
	for _, s := range src {
		s.checkWhole()
	}
	var key []uint64
	var group []uint32
	var dl []uint16
	moved := make([][]uint32, len(src))
	postBytes := 0
	for i, s := range src {
		moved[i] = make([]uint32, s.Docs())
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.Dead(d) {
				continue
			}
			moved[i][d] = uint32(len(key)) + 1
			key = append(key, s.key[d])
			group = append(group, s.Group(d))
			dl = append(dl, s.Len(d))
		}
		// Live postings take at most their bytes in the source, but for a
		// source's first gaps, which grow by the documents before it.
		postBytes += len(s.post)*(s.Docs()-s.DeadCount())/max(s.Docs(), 1) + 64
	}
	// The terms of all sources, ascending; each term's postings in source
	// order are in new doc order.
	var terms []uint32
	for _, s := range src {
		terms = append(terms, s.terms...)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	w := newSegmentWriter(key, group, dl, layerMin, len(terms), postBytes)
	var entries []uint64
	for _, t := range terms {
		entries = entries[:0]
		for i, s := range src {
			ti := s.termIndex(t)
			if ti < 0 {
				continue
			}
			s.eachPosting(ti, func(doc, tf uint32) {
				if n := moved[i][doc]; n != 0 {
					entries = append(entries, uint64(n-1)<<logTFBits|uint64(tf))
				}
			})
		}
		if len(entries) > 0 {
			w.addTerm(t, entries)
		}
	}
	return w.finish(), moved
}
