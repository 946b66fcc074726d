package bm25

// This file holds a term rank: a bitmap of the global term ids a segment
// holds (or a partition's statistics hold a df of), with each cache line's
// count of the ids before it, so that a term's place is found in one line,
// where a binary search takes one cold line a step past the first few
// (issue 33: a cheap query's term lookups in the segments and its dfs in
// the partitions were a third of its cache misses).

import (
	"math/bits"
	"sync/atomic"
)

// termRank is a segment's term ids as blocks of a cache line each: a word
// holding how many of the segment's terms come before the block, then
// rankBits bits, one an id, set where the segment holds the id.
type termRank []uint64

// rankWords is a block's words; rankBits the ids a block covers.
const (
	rankWords = 8
	rankBits  = (rankWords - 1) * 64
)

// rankAfter is about how many lookups of a segment (or a column) are made
// through a search before its rank is built (rankAt): a lookup is one
// query term in one segment (or one partition's column), so a command that
// asks one query of a few terms never builds it, and a server builds it
// within its first queries. A query of over rankAfter terms (a long chat
// turn's message) builds every rank in its own lookups, as does a merge,
// which looks up each of its terms in every source: a few milliseconds
// once, at 1 GB.
const rankAfter = 64

// rankDensity: a rank is built only where its bytes are at most half the
// ids' own (one id in 14 at least), so that a segment of few terms among
// many global ids (a small batch), or a partition's df of few, keeps its
// search alone.
const rankDensity = 2

// newTermRank returns the rank of terms (ascending ids), or nil when it
// would be too large beside them (density: rankDensity; 0, at any
// density).
func newTermRank(terms []uint32, density int) termRank {
	if len(terms) == 0 {
		return nil
	}
	blocks := int(terms[len(terms)-1])/rankBits + 1
	if blocks*rankWords*8*density > len(terms)*4 {
		return nil
	}
	r := make(termRank, blocks*rankWords)
	for _, id := range terms {
		o := int(id) % rankBits
		r[int(id)/rankBits*rankWords+1+o/64] |= 1 << (o % 64)
	}
	n := uint64(0)
	for b := range blocks {
		base := b * rankWords
		r[base] = n // the segment's terms before the block
		for _, w := range r[base+1 : base+rankWords] {
			n += uint64(bits.OnesCount64(w))
		}
	}
	return r
}

// index returns id's index among the segment's terms, or -1.
func (r termRank) index(id uint32) int {
	b, o := int(id)/rankBits, int(id)%rankBits
	if b*rankWords >= len(r) {
		return -1
	}
	blk := r[b*rankWords : b*rankWords+rankWords : b*rankWords+rankWords]
	w, bit := 1+o/64, uint64(1)<<(o%64)
	if blk[w]&bit == 0 {
		return -1
	}
	n := blk[0] + uint64(bits.OnesCount64(blk[w]&(bit-1)))
	for _, x := range blk[1:w] {
		n += uint64(bits.OnesCount64(x))
	}
	return int(n)
}

// rankState is a segment's rank, built once it has been asked enough.
type rankState struct {
	lookups atomic.Int64
	rank    atomic.Pointer[termRank]
	none    atomic.Bool // too large: never built
}

// index returns id's index in ids (ascending, unchanging) through the
// rank, with ok false when there is none (yet): the caller searches ids.
// The rank is built on the lookup that rankAt(ids) says, after check has
// checked the ids' bytes (every id is read).
func (st *rankState) index(id uint32, ids []uint32, check func()) (i int, ok bool) {
	return st.indexAt(id, ids, check, rankDensity)
}

// indexAt is index with the rank built at density (newTermRank's).
func (st *rankState) indexAt(id uint32, ids []uint32, check func(), density int) (i int, ok bool) {
	if r := st.rank.Load(); r != nil {
		return r.index(id), true
	}
	if st.none.Load() || st.lookups.Add(1) != rankAt(ids) {
		return 0, false
	}
	check()
	r := newTermRank(ids, density)
	if r == nil {
		st.none.Store(true)
		return 0, false
	}
	st.rank.Store(&r)
	return r.index(id), true
}

// rankAt is the lookup on which the rank of ids is built: rankAfter to
// twice that, by their number, so that a query, which asks every
// segment and every partition's column, builds one or a few, not all of
// them (a reopened 1 GB run's were 7 ms, built on one query at once).
func rankAt(ids []uint32) int64 { return rankAfter + int64(len(ids)%rankAfter) }

// bytes is the rank's size on the heap, once built.
func (st *rankState) bytes() int64 {
	if r := st.rank.Load(); r != nil {
		return int64(cap(*r)) * 8
	}
	return 0
}
