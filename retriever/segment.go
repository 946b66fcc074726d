package retriever

// This file holds the segment, one batch's pieces and postings, and its
// read side: term lookup, posting lists, lengths and dead bits.

import (
	"slices"
)

// A segment holds the pieces (documents) indexed in one batch and their
// postings. It is immutable once committed, but for its dead-doc bits, which
// are written only under the index's write lock.
//
// Per piece it keeps a few small columns, never the text: the text is read
// again from the file for the few pieces a search returns. The columns are
// narrowed where the values allow (files as runs of pieces, 16-bit offsets
// and conversations, byte lengths and line steps, with the rare wide value
// aside), since with postings they are most of the index's memory. Postings
// are per term, varint-encoded: (doc delta << 1 | tf==1), then tf when it is
// not 1; a term with many postings keeps them as two lists (see layers).
type segment struct {
	hash []uint64 // dedupe key: hash of the piece's text as returned
	// 0-based line: lineBase[d/lineGroup] + lineStep[d], or farLine[d]
	// where the step does not fit a byte (see lineOf)
	lineBase []uint32
	lineStep []uint8
	farLine  []farLine // by piece, ascending
	dl       []uint8   // number of terms; longMark: see longDL
	flags    []uint8
	dead     []uint64 // bitset
	ndead    int

	fileRuns []fileRun            // the file of each piece: runs by first piece
	start16  []uint16             // byte offset of the piece in its line, as written in the file
	blen16   []uint16             // byte length of the piece in the file
	wide     map[uint32][2]uint32 // start and length of pieces that do not fit 16 bits
	longDL   map[uint32]uint16    // number of terms of pieces with longMark or more
	conv16   []uint16             // index into convs
	convs    []uint32             // conversation ids (0: none, plain files and unfielded records)
	conv32   []uint32             // the ids themselves, in a batch with too many for conv16

	masked   map[uint32]string // text of pieces whose text differs from the file's (masking)
	toldHash map[uint32]uint64 // hash of the whole trimmed message of told pieces

	terms []uint32 // global term ids, ascending
	// termSample holds every termSampleEvery-th of terms: a lookup searches
	// it (small, and often in cache), then one short run of terms, where a
	// search of the whole column misses the cache at nearly every step.
	termSample []uint32
	// meta[i] is terms[i]'s; meta[len(terms)] holds where the last ends.
	meta     []termMeta
	post     []byte
	refAvgdl float64
	skips    []skipEntry
	dense    map[int]*denseTerm // by term index, for the most frequent terms
	layers   map[int]*layers    // by term index, for terms with many postings
}

const (
	metaSplit = 1 << iota
	metaDense
)

// termSampleEvery is how many terms apart termSample's are.
const termSampleEvery = 64

// sampleTerms returns every termSampleEvery-th of terms, from the first.
func sampleTerms(terms []uint32) []uint32 {
	sample := make([]uint32, 0, (len(terms)+termSampleEvery-1)/termSampleEvery)
	for i := 0; i < len(terms); i += termSampleEvery {
		sample = append(sample, terms[i])
	}
	return sample
}

// lengthAt returns the length of piece d, the list's k-th: from the list's
// own lengths when it has them, else from the segment's column.
func (s *segment) lengthAt(dls []uint8, k int, d uint32) uint16 {
	if k < len(dls) && dls[k] != longMark {
		return uint16(dls[k])
	}
	return s.dlOf(d)
}

// lists returns the posting lists of the segment's i-th term: one, or two
// for a split term (high first).
func (s *segment) lists(i int, buf *[2]list) []list {
	m, end := &s.meta[i], &s.meta[i+1]
	p := s.post[m.off:end.off]
	sk := s.skips[m.skipOff:end.skipOff]
	var dense *denseTerm
	if m.flags&metaDense != 0 {
		dense = s.dense[i]
	}
	if m.flags&metaSplit == 0 {
		buf[0] = list{it: newPostingIter(p), maxTF: m.maxTF, maxImpact: m.maxImpact, dense: dense}
		buf[0].it.skips = sk
		return buf[:1]
	}
	l := s.layers[i]
	buf[0] = list{it: newPostingIter(p[:l.split]), maxTF: l.maxTF[0], maxImpact: l.maxImpact[0], dls: l.dl, dense: dense}
	buf[0].it.skips = sk[:l.skipSplit]
	buf[1] = list{it: newPostingIter(p[l.split:]), maxTF: l.maxTF[1], maxImpact: l.maxImpact[1], dense: dense}
	buf[1].it.skips = sk[l.skipSplit:]
	return buf[:2]
}

// eachPosting calls fn for every posting of the segment's i-th term, in
// piece order, whatever lists hold them.
func (s *segment) eachPosting(i int, fn func(doc, tf uint32)) {
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

func (s *segment) docs() int { return len(s.hash) }

// longMark stands in the dl column for a length kept in longDL: nearly
// every piece has fewer terms, and a byte a piece keeps the column small
// enough to stay in cache while a query reads it.
const longMark = 0xff

func (s *segment) dlOf(d uint32) uint16 {
	if v := s.dl[d]; v != longMark {
		return uint16(v)
	}
	return s.longDL[d]
}

func (s *segment) isDead(d uint32) bool { return s.dead[d>>6]&(1<<(d&63)) != 0 }

func (s *segment) kill(d uint32) {
	if !s.isDead(d) {
		s.dead[d>>6] |= 1 << (d & 63)
		s.ndead++
	}
}

// termIndex returns the index of a global term in the segment, or -1.
func (s *segment) termIndex(term uint32) int {
	// The last sampled term at or before term starts the run to search.
	j, ok := slices.BinarySearch(s.termSample, term)
	if ok {
		return j * termSampleEvery
	}
	if j == 0 {
		return -1 // before the first term (which is sampled)
	}
	lo := (j - 1) * termSampleEvery
	i, ok := slices.BinarySearch(s.terms[lo:min(lo+termSampleEvery, len(s.terms))], term)
	if !ok {
		return -1
	}
	return lo + i
}

// termMeta is what a segment keeps of a term besides its postings, side by
// side so that a query reads it with one cache miss. The largest tf and
// the largest impact of its postings bound its score (MaxScore). A
// posting's impact is its bm25 without idf and k1+1, tf/(tf +
// k1(1-b+b·dl/refAvgdl)), at the batch's average piece length: see
// bm25.ScoreBound for how it bounds the score at the index's.
type termMeta struct {
	off       uint32 // postings: post[off:] up to the next term's off
	skipOff   uint32 // skip entries: skips[skipOff:] up to the next term's
	maxImpact float32
	maxTF     uint16
	flags     uint8 // metaSplit, metaDense: the term is in layers, dense
}
