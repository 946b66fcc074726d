package retriever

// This file holds the builder: one batch's pieces tokenized, counted and
// laid out as a segment.

import (
	"cmp"
	"slices"

	"runls/retriever/internal/bm25"
)

// builder collects the pieces of one batch with local term ids. Postings
// are logged as packed (term, doc, tf) words in doc order and laid out per
// term by a counting sort when the batch is finished: no per-term slices grow
// while indexing, and nothing in the builder holds pointers for the GC to scan.
type builder struct {
	seg     rawColumns
	terms   *bm25.TermTable
	log     []uint64 // term<<(logDocBits+logTFBits) | doc<<logTFBits | tf
	sorted  []uint64 // room for the log sorted by term, in finish
	tf      []uint32 // count of each term in the current piece
	count   []uint32 // postings per term
	touched []int32
	scan    bm25.Scanner
	tokens  int // terms of the current piece

	// per agent id: pieces, total length and local df
	agentDocs  []int
	agentLen   []int64
	agentDF    [][]uint32
	inputBytes int64
	layerMin   int // see defaultLayerMin
}

// A batch holds at most 2^26 pieces with 2^27 distinct terms: a single file
// of some 6 GB. A piece of at most 2000 characters has at most 1000 terms.
const (
	logTFBits      = 11
	logDocBits     = 26
	logTermShift   = logDocBits + logTFBits
	maxBuilderDocs = 1<<logDocBits - 1
)

// next returns a builder for the worker's next batch, which takes over this
// one's log and sort buffers (the batch's largest, some 50 MB each): made
// anew for each batch, their clearing and first touch cost a tenth of the
// indexing time. This builder must be finished.
func (b *builder) next() *builder {
	n := newBuilder(b.layerMin)
	n.log, n.sorted = b.log[:0], b.sorted[:0]
	b.log, b.sorted = nil, nil
	return n
}

func newBuilder(layerMin int) *builder {
	return &builder{terms: bm25.NewTermTable(), layerMin: layerMin}
}

// pieceTerms tokenizes one piece into the builder's pending term counts and
// returns how many terms it has; 0 leaves nothing pending.
func (b *builder) pieceTerms(text []byte) int {
	b.tokens = 0
	b.scan.Each(text, b.addToken)
	return b.tokens
}

func (b *builder) addToken(term []byte, h uint64) {
	id := b.terms.ID(term, h)
	if int(id) >= len(b.tf) {
		b.tf = append(b.tf, 0)
		b.count = append(b.count, 0)
	}
	if b.tf[id] == 0 {
		b.touched = append(b.touched, id)
	}
	b.tf[id]++
	b.tokens++
}

// addDoc adds a piece whose terms pieceTerms counted; it returns its doc id.
func (b *builder) addDoc(d docColumns, agent uint32) uint32 {
	s := &b.seg
	doc := uint32(len(s.hash))
	s.hash = append(s.hash, d.hash)
	s.file = append(s.file, d.file)
	s.line = append(s.line, d.line)
	s.start = append(s.start, d.start)
	s.blen = append(s.blen, d.blen)
	dl := min(b.tokens, 0xffff)
	s.dl = append(s.dl, uint16(dl))
	s.conv = append(s.conv, d.conv)
	s.flags = append(s.flags, d.flags)
	for int(agent) >= len(b.agentDF) {
		b.agentDF = append(b.agentDF, nil)
		b.agentDocs = append(b.agentDocs, 0)
		b.agentLen = append(b.agentLen, 0)
	}
	df := b.agentDF[agent]
	if len(df) < len(b.tf) {
		if cap(df) < len(b.tf) {
			grown := make([]uint32, len(b.tf), 2*len(b.tf))
			copy(grown, df)
			df = grown
		}
		df = df[:len(b.tf)]
	}
	for _, id := range b.touched {
		tf := min(b.tf[id], 1<<logTFBits-1)
		b.log = append(b.log, uint64(id)<<logTermShift|uint64(doc)<<logTFBits|uint64(tf))
		b.tf[id] = 0
		b.count[id]++
		df[id]++
	}
	b.agentDF[agent] = df
	b.agentDocs[agent]++
	b.agentLen[agent] += int64(dl)
	b.touched = b.touched[:0]
	b.tokens = 0
	return doc
}

// Postings and pieces per input byte, a little above what generated and
// real runs show (0.16 and 0.01), so that reserve makes room once.
const (
	postingsPerByte = 0.18
	piecesPerByte   = 0.012
)

// reserve makes room for what n more input bytes will likely add, so that
// the builder's slices do not grow by doubling (and copying) many times.
func (b *builder) reserve(n int64) {
	if n <= 0 {
		return
	}
	n = min(n, 64<<20) // past that, doubling costs little against the reading
	if need := len(b.log) + int(float64(n)*postingsPerByte); need > cap(b.log) {
		// At least doubled: made just large enough for each file, the log
		// (the batch's largest slice) is copied again for each file.
		b.log = slices.Grow(b.log, max(need, 2*cap(b.log))-len(b.log))
	}
	p := int(float64(n) * piecesPerByte)
	r := &b.seg
	r.hash, r.file, r.line = slices.Grow(r.hash, p), slices.Grow(r.file, p), slices.Grow(r.line, p)
	r.start, r.blen, r.conv = slices.Grow(r.start, p), slices.Grow(r.blen, p), slices.Grow(r.conv, p)
	r.dl, r.flags = slices.Grow(r.dl, p), slices.Grow(r.flags, p)
}

// full reports whether the batch must be finished before another piece.
func (b *builder) full() bool { return len(b.seg.hash) >= maxBuilderDocs }

// localTerms returns the local term ids of the doc being added (before addDoc).
func (b *builder) localTerms() []int32 { return b.touched }

// finish lays the batch out as a segment with global term ids (globalIDs
// maps each local id). The segment shares nothing with the builder but its
// columns, so the builder's tables are garbage once it is dropped.
func (b *builder) finish(globalIDs []uint32) *segment {
	n := len(globalIDs)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, c int32) int { return cmp.Compare(globalIDs[a], globalIDs[c]) })
	// Counting sort of the log by term, in the segment's term order; the log is
	// in doc order, so each term's postings stay in doc order.
	at := make([]uint32, n)
	next := uint32(0)
	for _, id := range order {
		at[id] = next
		next += b.count[id]
	}
	// Every place of sorted is written once: no need to clear it.
	sorted := slices.Grow(b.sorted[:0], len(b.log))[:len(b.log)]
	for _, e := range b.log {
		id := e >> logTermShift
		sorted[at[id]] = e
		at[id]++
	}
	b.sorted = sorted

	src := &b.seg
	s := &segment{
		terms: make([]uint32, n), meta: make([]termMeta, n+1),
		dead: make([]uint64, (len(src.hash)+63)/64),
	}
	s.narrow(src)
	post := make([]byte, 0, len(sorted)*2)
	cut := newImpactCut(src.dl, b.layerMin)
	s.refAvgdl = cut.avgdl
	k := 0
	for i, id := range order {
		s.terms[i] = globalIDs[id]
		m := &s.meta[i]
		m.off, m.skipOff = uint32(len(post)), uint32(len(s.skips))
		entries := sorted[k : k+int(b.count[id])]
		k += len(entries)
		if high := cut.high(entries); high >= 0 {
			l := &layers{}
			post, l.maxTF[0], l.maxImpact[0] = s.appendList(post, entries, side{cut, high, true})
			l.split = uint32(len(post)) - m.off
			l.dl = make([]uint8, 0, len(entries)/layerFraction)
			for j, e := range entries {
				if cut.buckets[j] >= uint16(high) {
					l.dl = append(l.dl, uint8(min(cut.dl[uint32(e>>logTFBits)&maxBuilderDocs], longMark)))
				}
			}
			l.dl = slices.Clip(l.dl)
			l.skipSplit = uint32(len(s.skips)) - m.skipOff
			post, l.maxTF[1], l.maxImpact[1] = s.appendList(post, entries, side{cut, high, false})
			if s.layers == nil {
				s.layers = map[int]*layers{}
			}
			s.layers[i] = l
			m.flags |= metaSplit
			m.maxTF, m.maxImpact = max(l.maxTF[0], l.maxTF[1]), max(l.maxImpact[0], l.maxImpact[1])
			s.addDense(i, entries, len(src.hash))
			continue
		}
		post, m.maxTF, m.maxImpact = s.appendList(post, entries, side{cut: cut, from: -1})
		s.addDense(i, entries, len(src.hash))
	}
	s.meta[n] = termMeta{off: uint32(len(post)), skipOff: uint32(len(s.skips))}
	s.termSample = sampleTerms(s.terms)
	s.post = slices.Clip(post)
	if len(post) < cap(post)*3/4 {
		s.post = slices.Clone(post)
	}
	s.skips = slices.Clip(s.skips)
	return s
}

// appendList encodes entries (packed log words of one term, in piece order)
// as a posting list with its skips at the end of post, and returns the
// largest tf and impact in it. It takes the entries of one side.
func (s *segment) appendList(post []byte, entries []uint64, sd side) ([]byte, uint16, float32) {
	start := uint32(len(post))
	n := len(entries)
	if sd.from >= 0 {
		n = 0
		for j := range entries {
			if sd.takes(j) {
				n++
			}
		}
	}
	last := ^uint32(0)
	maxTF, maxImpact := uint16(0), 0.0
	bMaxTF, bImpact := uint16(0), 0.0
	c := 0
	for j, e := range entries {
		if !sd.takes(j) {
			continue
		}
		c++
		doc := uint32(e>>logTFBits) & maxBuilderDocs
		tf := uint32(e & (1<<logTFBits - 1))
		post = appendPosting(post, uint64(doc-last), tf)
		last = doc
		impact := float64(tf) / (float64(tf) + sd.cut.norms[sd.cut.dl[doc]])
		maxTF, maxImpact = max(maxTF, uint16(tf)), max(maxImpact, impact)
		bMaxTF, bImpact = max(bMaxTF, uint16(tf)), max(bImpact, impact)
		if n > skipEvery && (c%skipEvery == 0 || c == n) {
			s.skips = append(s.skips, skipEntry{lastDoc: doc, end: uint32(len(post)) - start, maxTF: bMaxTF, maxImpact: ceil32(bImpact)})
			bMaxTF, bImpact = 0, 0
		}
	}
	return post, maxTF, ceil32(maxImpact)
}

// addDense gives the segment's i-th term (its entries) a bit set when it is
// in enough of the segment's pieces.
func (s *segment) addDense(i int, entries []uint64, docs int) {
	if n := len(entries); n >= docs/denseFraction && n > skipEvery {
		if s.dense == nil {
			s.dense = map[int]*denseTerm{}
		}
		s.dense[i] = newDenseTerm(entries, docs)
		s.meta[i].flags |= metaDense
	}
}
