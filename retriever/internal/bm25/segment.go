package bm25

// This file holds the segment, one batch's documents and postings, and its
// read side: term lookup, posting lists, lengths, groups and dead bits.

import (
	"cmp"
	"slices"
	"sync/atomic"
	"unsafe"
)

// A Segment holds the documents indexed in one batch and their postings. It
// is immutable once built, but for its dead-document bits, which its owner
// writes (Kill) only while no search reads the segment.
//
// Per document it keeps its key, its length and its group, never its text.
// Postings are per term, varint-encoded: (doc delta << 1 | tf==1), then tf
// when it is not 1; a term with many postings keeps them as two lists (see
// layers). The layout is flat (sorted slices and offsets, not a Go map per
// term or per document; the rare values that do not fit a column are
// Sparse), so that a segment read back from disk needs no map built again.
type Segment struct {
	key   []uint64 // by document: the owner's dedupe key (see topK)
	dl    []uint8  // number of terms; longMark: see longDL
	dead  []uint64 // bitset
	ndead int
	// groups gives each document its group: runs by first document. A
	// filter decides what it can once a group (Filter.Group).
	groups []groupRun
	// longDL is the length of documents with longMark or more terms: a
	// handful a segment.
	longDL Sparse[uint16]

	terms []uint32 // global term ids, ascending
	// termSample holds every termSampleEvery-th of terms: a lookup searches
	// it (small, and often in cache), then one short run of terms, where a
	// search of the whole column misses the cache at nearly every step.
	termSample []uint32
	// termTop holds every termTopEvery-th of termSample, on the heap: a
	// lookup searches it, then one stretch of termSample, then one run of
	// terms. The samples of a segment span a page or two, which each query
	// met cold (a dozen misses a segment, a tenth of a rare word's
	// query); the tops of all segments are a few kilobytes that every
	// query reads, so they stay in cache (issue 33).
	termTop []uint32
	// rank finds a term's index in one cache line, once the segment has
	// been asked often enough (termrank.go).
	rank rankState
	// layersRank and denseRank find a term's place in layers and dense
	// so, by its index: a binary search of either column's term indexes
	// (a few thousand, some 20 KB) took a cold line a step, twice a
	// frequent word's list in each segment (issue 33). Built at any
	// density: a rank of a segment's term indexes is a byte for 7 of its
	// terms at most.
	layersRank, denseRank rankState
	// meta[i] is terms[i]'s; meta[len(terms)] holds where the last ends.
	meta     []termMeta
	post     []byte
	refAvgdl float64
	skips    []skipEntry
	dense    Sparse[denseTerm] // by term index, for the most frequent terms
	layers   Sparse[layers]    // by term index, for terms with many postings

	// keysOK has a bit for each range of keys (a document's is d>>keyShift)
	// that checkKey found checked, beside lazy: a search of the segment
	// has read its line already.
	keysOK   [keyRanges / 64]atomic.Uint64
	keyShift uint8
	lazy     *lazyChecks // read with ReadSegmentLazy: its bytes checked at their first use (backing.go)
}

// groupRun says that documents from lo on (up to the next run) are of group.
type groupRun struct {
	lo, group uint32
}

const (
	metaSplit = 1 << iota
	metaDense
)

// termSampleEvery is how many terms apart termSample's are.
const termSampleEvery = 64

// termTopEvery is how many sampled terms apart termTop's are: a stretch
// of termSample between two is a cache line.
const termTopEvery = 16

// sampled returns every every-th of v, from the first.
func sampled(v []uint32, every int) []uint32 {
	sample := make([]uint32, 0, (len(v)+every-1)/every)
	for i := 0; i < len(v); i += every {
		sample = append(sample, v[i])
	}
	return sample
}

// sampleTerms sets termSample and termTop from terms.
func (s *Segment) sampleTerms() {
	s.termSample = sampled(s.terms, termSampleEvery)
	s.sampleTop()
}

// sampleTop sets termTop from termSample.
func (s *Segment) sampleTop() { s.termTop = sampled(s.termSample, termTopEvery) }

// lengthAt returns the length of document d, the list's k-th: from the list's
// own lengths when it has them, else from the segment's column.
func (s *Segment) lengthAt(dls []uint8, k int, d uint32) uint16 {
	if k < len(dls) && dls[k] != longMark {
		return uint16(dls[k])
	}
	return s.Len(d)
}

// lists returns the posting lists of the segment's i-th term: one, or two
// for a split term (high first).
func (s *Segment) lists(i int, buf *[2]list) []list {
	s.checkTerm(i)
	s.checkDocs()
	m, end := &s.meta[i], &s.meta[i+1]
	p := s.post[m.off:end.off]
	sk := s.skips[m.skipOff:end.skipOff]
	var dense *denseTerm
	if m.flags&metaDense != 0 {
		dense = termColumnPtr(&s.dense, &s.denseRank, i)
	}
	if m.flags&metaSplit == 0 {
		buf[0] = list{it: newPostingIter(p), maxTF: m.maxTF, maxImpact: m.maxImpact, dense: dense}
		buf[0].it.skips = sk
		return buf[:1]
	}
	l := termColumnPtr(&s.layers, &s.layersRank, i)
	buf[0] = list{it: newPostingIter(p[:l.split]), maxTF: l.maxTF[0], maxImpact: l.maxImpact[0], dls: l.dl, dense: dense}
	buf[0].it.skips = sk[:l.skipSplit]
	buf[1] = list{it: newPostingIter(p[l.split:]), maxTF: l.maxTF[1], maxImpact: l.maxImpact[1], dense: dense}
	buf[1].it.skips = sk[l.skipSplit:]
	return buf[:2]
}

// termColumnPtr returns a pointer to term index i's value in c, a column
// by term index, or nil: found through the column's rank r once built,
// else by a binary search. The column's indexes were checked at the
// segment's decode.
func termColumnPtr[T any](c *Sparse[T], r *rankState, i int) *T {
	if j, ok := r.indexAt(uint32(i), c.docs, func() {}, 0); ok {
		if j < 0 {
			return nil
		}
		return &c.vals[j]
	}
	return c.Ptr(uint32(i))
}

// eachPosting calls fn for every posting of the segment's i-th term, in
// document order, whatever lists hold them.
func (s *Segment) eachPosting(i int, fn func(doc, tf uint32)) {
	var buf [2]list
	ls := s.lists(i, &buf)
	a := &ls[0].it
	a.next()
	if len(ls) == 1 {
		for ; a.valid; a.next() {
			fn(a.doc, a.tf)
		}
		return
	}
	b := &ls[1].it
	b.next()
	for a.valid || b.valid {
		if !b.valid || (a.valid && a.doc < b.doc) {
			fn(a.doc, a.tf)
			a.next()
		} else {
			fn(b.doc, b.tf)
			b.next()
		}
	}
}

// Docs returns how many documents the segment holds, dead ones included.
func (s *Segment) Docs() int { return len(s.key) }

// Key returns document d's key, as given to Builder.Add.
func (s *Segment) Key(d uint32) uint64 {
	s.checkKey(d)
	return s.key[d]
}

// DeadCount returns how many of the segment's documents are dead.
func (s *Segment) DeadCount() int { return s.ndead }

// Group returns document d's group, as given to Builder.Add.
func (s *Segment) Group(d uint32) uint32 {
	i, _ := slices.BinarySearchFunc(s.groups, d+1, func(r groupRun, t uint32) int { return cmp.Compare(r.lo, t) })
	return s.groups[i-1].group
}

// longMark stands in the dl column for a length kept in longDL: nearly
// every document has fewer terms, and a byte a document keeps the column small
// enough to stay in cache while a query reads it.
const longMark = 0xff

// Len returns document d's length in terms.
func (s *Segment) Len(d uint32) uint16 {
	if v := s.dl[d]; v != longMark {
		return uint16(v)
	}
	n, _ := s.longDL.Get(d)
	return n
}

// Dead reports whether document d is dead. A segment with no dead
// document (most: a merge leaves its dead out) is answered from its count,
// beside the segment's other fields, without the bit's word: a query asks
// of every document it offers, and the word, in a bitset of some 300 KB a
// merged segment, was a cache miss each (issue 33).
func (s *Segment) Dead(d uint32) bool {
	return s.ndead != 0 && s.dead[d>>6]&(1<<(d&63)) != 0
}

// Kill marks document d dead; it reports whether it was alive. The owner
// calls it only while no search reads the segment.
func (s *Segment) Kill(d uint32) bool {
	if !s.Dead(d) {
		s.dead[d>>6] |= 1 << (d & 63)
		s.ndead++
		return true
	}
	return false
}

// termIndex returns the index of a global term in the segment, or -1.
func (s *Segment) termIndex(term uint32) int {
	if i, ok := s.rank.index(term, s.terms, func() { s.Terms() }); ok { // Terms checks them
		return i
	}
	return s.sampledIndex(term)
}

// sampledIndex is termIndex through the samples and a run of terms.
func (s *Segment) sampledIndex(term uint32) int {
	// The last top sampled term at or before term starts the stretch of
	// samples to search, whose last at or before term starts the run of
	// terms to search.
	t := lastAtOrBefore(s.termTop, term)
	if t < 0 {
		return -1 // before the first term (which is sampled)
	}
	from := t * termTopEvery
	j := from + lastAtOrBefore(s.termSample[from:min(from+termTopEvery, len(s.termSample))], term)
	if s.termSample[j] == term {
		return j * termSampleEvery
	}
	lo := j * termSampleEvery
	s.checkTermRun(lo)
	i, ok := slices.BinarySearch(s.terms[lo:min(lo+termSampleEvery, len(s.terms))], term)
	if !ok {
		return -1
	}
	return lo + i
}

// lastAtOrBefore returns the place of the last of v (ascending) at or
// before x, or -1.
func lastAtOrBefore(v []uint32, x uint32) int {
	i, found := slices.BinarySearch(v, x)
	if found {
		return i
	}
	return i - 1
}

// termMeta is what a segment keeps of a term besides its postings, side by
// side so that a query reads it with one cache miss. The largest tf and
// the largest impact of its postings bound its score (MaxScore). A
// posting's impact is its bm25 without idf and k1+1, tf/(tf +
// k1(1-b+b·dl/refAvgdl)), at the batch's average document length: see
// ScoreBound for how it bounds the score at the index's.
type termMeta struct {
	off       uint32 // postings: post[off:] up to the next term's off
	skipOff   uint32 // skip entries: skips[skipOff:] up to the next term's
	maxImpact float32
	maxTF     uint16
	flags     uint8 // metaSplit, metaDense: the term is in layers, dense
}

// narrow lays a builder's columns out as the segment's: keys as they are,
// lengths in a byte (longDL aside), groups as runs.
func (s *Segment) narrow(key []uint64, group []uint32, dl []uint16) {
	s.key = slices.Clone(key)
	s.dl = make([]uint8, len(dl))
	for d, l := range dl {
		if l >= longMark {
			s.longDL.Set(uint32(d), l)
			l = longMark
		}
		s.dl[d] = uint8(l)
	}
	for d := range group {
		if d == 0 || group[d] != group[d-1] {
			s.groups = append(s.groups, groupRun{lo: uint32(d), group: group[d]})
		}
	}
	s.groups = slices.Clip(s.groups)
}

// Footprint is the memory a segment holds, by part, in bytes (capacity of
// the slices it owns).
type Footprint struct {
	Docs     int64 // live and dead documents
	Postings int64 // encoded postings
	Columns  int64 // per-document keys, lengths, groups and dead bits
	Terms    int64 // term tables, skips, split and dense terms
}

// Footprint measures the segment.
func (s *Segment) Footprint() Footprint {
	f := Footprint{Docs: int64(s.Docs()), Postings: int64(cap(s.post))}
	f.Columns = int64(cap(s.key))*8 + int64(cap(s.groups))*8 + int64(cap(s.dl)) + int64(cap(s.dead))*8 + int64(s.longDL.Len())*8
	f.Terms = int64(cap(s.terms)+cap(s.termSample)+cap(s.termTop))*4 + s.rank.bytes() + s.layersRank.bytes() + s.denseRank.bytes() + int64(cap(s.meta))*int64(unsafe.Sizeof(termMeta{})) + int64(cap(s.skips))*16
	s.layers.Each(func(_ uint32, l layers) { f.Terms += int64(cap(l.dl)) })
	s.dense.Each(func(_ uint32, d denseTerm) {
		f.Terms += int64(cap(d.bits))*8 + int64(cap(d.tfAt))*4 + int64(cap(d.tfLow))*2 + int64(cap(d.tfs)) + int64(d.bigTF.Len())*8 + int64(cap(d.winMax))
	})
	return f
}

// Terms returns the global ids of the segment's terms, ascending (shared:
// read only).
func (s *Segment) Terms() []uint32 {
	if s.lazy != nil {
		CheckValues(s.lazy.back, s.terms)
	}
	return s.terms
}

// EachPosting calls fn for every posting of global term id in the segment,
// dead documents' included, in document order.
func (s *Segment) EachPosting(term uint32, fn func(doc, tf uint32)) {
	if i := s.termIndex(term); i >= 0 {
		s.eachPosting(i, fn)
	}
}
