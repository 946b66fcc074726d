package bm25

// This file holds merging: which segments to merge, and their live documents
// written into one.

import (
	"slices"
)

// Every batch adds a segment, and an owner that adds documents again (a
// changed tail of its input) leaves dead ones behind. A query pays some
// fixed costs in every segment (its terms looked up, its lists' first
// blocks, a filter's cursors), so that an index of many segments answers a
// cheap query slower than one of few. The merge policy (MergePolicy)
// keeps them few: after LogByteSizeMergePolicy of Lucene, it merges runs
// of consecutive segments of about one size (one level: sizes within a
// factor of MergeFactor) once there are MergeFactor of them, or once they
// fill a merged segment of MaxMergeBytes; and it writes again, alone, a
// segment that is mostly dead.
//
// Why bytes and not documents: what a merge costs (the output it builds on
// the heap before its owner writes it out, its time, the bytes each merge
// writes again) is its bytes; the engine's thresholds that depend on a
// segment's size are relative to its documents (Tuning.ScaleDocs), so that
// either measure would do for the answers' paths.
//
// Why consecutive: the segments stay in the order their documents came
// (a merge's output takes its inputs' place), as Lucene's log policies
// keep them; a merge of neighbours of one level writes each document again
// about log_MergeFactor(MaxMergeBytes/MergeFloorBytes) times over its life.
// Query.DocOrder depends on it: a file's pieces in one segment are in
// location order only while merges join consecutive segments, oldest first.
const (
	// MergeFactor is how many segments of one level are merged at once,
	// and the ratio of one level's sizes to the next's.
	MergeFactor = 8
	// MergeFloorBytes is the size below which segments are of one level
	// (the smallest): the batches of a few appended lines, which following
	// makes every second, are merged MergeFactor at a time.
	MergeFloorBytes = 64 << 10
	// MaxMergeBytes is the most bytes (SegmentBytes, of live documents) a
	// merge's output may have, which it holds on the heap until its owner
	// writes it out. A generated 1 GB run's 43 batches are 2-11 MB each
	// (~300,000 documents the most): merged so, they are 8 segments (4 of
	// 77-81 MB), each batch written again once; up to 64 MiB, 11.
	MaxMergeBytes = 96 << 20
)

// SmallSegmentDocs is the fewest documents of a segment that its owner
// writes out as it is made (smaller ones wait for the owner's debounced
// writer, and are merged with others of their level when there are
// MergeFactor of them).
const SmallSegmentDocs = 1 << 16

// MergePolicy picks the segments to merge. Factor is 2 or more and Floor
// more than 0 (its levels are powers of Factor over Floor).
type MergePolicy struct {
	Factor   int   // segments of one level merged at once; a level's sizes span this factor
	Floor    int64 // sizes below are of the lowest level
	MaxBytes int64 // the most live bytes a merge's output may have
}

// DefaultMergePolicy is the policy an index merges by.
var DefaultMergePolicy = MergePolicy{Factor: MergeFactor, Floor: MergeFloorBytes, MaxBytes: MaxMergeBytes}

// CommandMergePolicy is the policy of a command that answers once and
// exits (runls search): it merges before it answers, so it merges the small
// segments only (those a few appended lines make, which would pile up
// command after command), up to 8 MiB in all: merging a first index's
// batches (some 11 s of CPU at 1 GB) is left to a server, but for
// neighbours small enough that together they stay within the 8 MiB
// (a first index's batches are 2–11 MB: a pair of small ones at most).
var CommandMergePolicy = MergePolicy{Factor: MergeFactor, Floor: MergeFloorBytes, MaxBytes: 8 << 20}

// SegmentSize is what the policy knows of a segment.
type SegmentSize struct {
	Bytes      int64 // SegmentBytes
	Docs, Dead int
}

// Live is the bytes of the segment's live documents (its bytes in
// proportion to its live documents).
func (z SegmentSize) Live() int64 {
	if z.Docs == 0 {
		return 0
	}
	return z.Bytes * int64(z.Docs-z.Dead) / int64(z.Docs)
}

// mostlyDead reports whether more than half the segment's documents are dead.
func (z SegmentSize) mostlyDead() bool { return z.Dead*2 > z.Docs }

// Pick returns the run of consecutive segments [lo, hi) to merge now, or
// lo == hi for none. It never picks a segment of more than MaxBytes, nor a
// run whose live bytes are more. A run starts at a segment of some level
// and takes the segments after it of that level or lower (a smaller one
// between two of the level goes with them, as in Lucene's log policies;
// smaller ones after the last of the level are left to their own run).
// It picks:
//   - a segment above the lowest level that is mostly dead, alone;
//   - else the first run of Factor segments;
//   - else the first run of two or more that the next segment of its level
//     or lower would take over MaxBytes (the run is as large as a merge may
//     be).
//
// Each merge makes the segments fewer, or leaves a mostly dead segment
// with no dead documents, so an owner that merges until Pick picks none
// stops.
func (p MergePolicy) Pick(sizes []SegmentSize) (lo, hi int) {
	level := make([]int, len(sizes))
	for i, z := range sizes {
		level[i] = p.level(z.Live())
		if z.Bytes <= p.MaxBytes && z.mostlyDead() && level[i] > 0 {
			return i, i + 1
		}
	}
	fits := func(i, top int) bool { return level[i] <= top && sizes[i].Bytes <= p.MaxBytes }
	for lo = 0; lo < len(sizes); lo++ {
		if !fits(lo, level[lo]) || sizes[lo].Live() > p.MaxBytes/2 {
			continue // too large to merge with one of its size
		}
		top, total, last := level[lo], int64(0), lo
		for hi = lo; hi < len(sizes) && fits(hi, top) && total+sizes[hi].Live() <= p.MaxBytes; hi++ {
			total += sizes[hi].Live()
			if level[hi] == top {
				last = hi
			}
			if hi+1-lo >= p.Factor && last == hi {
				return lo, hi + 1
			}
		}
		// Factor of the level at once returned above; here the run is
		// full when the next segment would take it over MaxBytes.
		if full := hi < len(sizes) && fits(hi, top); full && last > lo {
			return lo, last + 1
		}
	}
	return 0, 0
}

// level is the level of live bytes: 0 below Floor, then one more for each
// Factor times.
func (p MergePolicy) level(live int64) int {
	if live < p.Floor {
		return 0
	}
	l := 1
	for n := p.Floor; n <= live/int64(p.Factor); n *= int64(p.Factor) {
		l++ // n*Factor <= live: no overflow
	}
	return l
}

// SegmentBytes is a segment's size for the merge policy: its postings,
// its columns and its term table, estimated from their lengths (cheap:
// nothing of a mapped segment is read).
func SegmentBytes(s *Segment) int64 {
	return int64(len(s.post)) + int64(s.Docs())*segmentDocBytes + int64(len(s.terms))*segmentTermBytes
}

// stopEvery is how many terms Merge writes between two asks of its stop:
// some milliseconds of a merge of 2 million documents.
const stopEvery = 1 << 12

// What a segment holds a document and a term besides the postings: the
// key, group, length and dead bit columns; a term's id, metadata and skips
// (a generated run's batches hold some 9 and 30 bytes).
const (
	segmentDocBytes  = 10
	segmentTermBytes = 32
)

// MergeCandidates returns the segments to merge now (none: not yet), as p
// picks them; a segment for which fixed (nil: none) reports true is never
// picked, as one over the bound.
func MergeCandidates(segments []*Segment, p MergePolicy, fixed func(i int) bool) []*Segment {
	sizes := make([]SegmentSize, len(segments))
	for i, s := range segments {
		sizes[i] = SegmentSize{Bytes: SegmentBytes(s), Docs: s.Docs(), Dead: s.DeadCount()}
		if fixed != nil && fixed(i) {
			sizes[i].Bytes = p.MaxBytes + 1
		}
	}
	lo, hi := p.Pick(sizes)
	return segments[lo:hi]
}

// Merge writes the live documents of src, in order, into one segment: those
// not dead in dead[i], a copy of src[i]'s dead bits (DeadBits) that its
// owner took while no document died, so that a merge can run while its
// owner kills documents in its sources (nil: src[i]'s own bits, which no
// one may change meanwhile). For each source it returns the new id + 1 of
// each of its documents (0: dead), with which the owner moves its own
// columns and references, and kills in the merged segment those that died
// since. It gathers one term's postings at a time (segmentWriter), so that
// what it holds besides the sources is the new segment and the largest
// term's postings. When stop (nil: never) reports true, asked every
// stopEvery terms, it gives up and returns nil: an owner closing does not
// wait for a merge of seconds.
func Merge(src []*Segment, dead [][]uint64, layerMin int, stop func() bool) (*Segment, [][]uint32) {
	for _, s := range src {
		s.checkWhole()
	}
	var key []uint64
	var group []uint32
	var dl []uint16
	moved := make([][]uint32, len(src))
	postBytes := 0
	for i, s := range src {
		bits := s.dead
		if dead != nil && dead[i] != nil {
			bits = dead[i]
		}
		moved[i] = make([]uint32, s.Docs())
		ndead := 0
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if bits[d>>6]&(1<<(d&63)) != 0 {
				ndead++
				continue
			}
			moved[i][d] = uint32(len(key)) + 1
			key = append(key, s.key[d])
			group = append(group, s.Group(d))
			dl = append(dl, s.Len(d))
		}
		// Live postings take at most their bytes in the source, but for a
		// source's first gaps, which grow by the documents before it.
		postBytes += len(s.post)*(s.Docs()-ndead)/max(s.Docs(), 1) + 64
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
	for k, t := range terms {
		if k%stopEvery == 0 && stop != nil && stop() {
			return nil, nil
		}
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
