package bm25

// This file holds the builder: one batch's documents tokenized, counted and
// laid out as a segment.

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// A Builder collects the documents of one batch with local term ids. Postings
// are logged as packed (term, doc, tf) words in doc order and laid out per
// term by a counting sort when the batch is finished: no per-term slices grow
// while indexing, and nothing in the builder holds pointers for the GC to scan.
type Builder struct {
	key    []uint64 // by document, as Add was given
	group  []uint32
	dl     []uint16
	terms  *TermTable
	log    []uint64 // term<<(logDocBits+logTFBits) | doc<<logTFBits | tf
	sorted []uint64 // room for the log sorted by term, in finish
	// sorted32 is sorted's, and wide a term's entries widened from it, in a
	// batch of at most narrowDocs documents (Finish)
	sorted32 []uint32
	wide     []uint64
	tf       []uint32 // count of each term in the current document
	count    []uint32 // postings per term
	touched  []int32
	scan     Scanner
	tokens   int // terms of the current document

	// by partition: documents and total length; by document, its
	// partition; the df of each term in each partition it is in, counted
	// by Finish for Stats.Add as uvarints: for each term, its global id
	// less the last term's, how many partitions, then each partition and
	// the df there (some 4 bytes a pair where three uint32 take 12: on
	// many small files there are some a third as many pairs as postings)
	partDocs  []int
	partLen   []int64
	part      []uint32
	partDF    []byte
	layerMin  int  // see DefaultLayerMin
	maxDocs   int  // the most documents Add takes: maxBuilderDocs but in tests
	refused   int  // documents Add refused since the batch was full
	passLimit int  // the postings of a pass of Finish's sort, in tests (0: see finishPasses)
	wideSort  bool // Finish sorts 64-bit words whatever the batch's documents, in tests
	onePass   bool // see SetOnePass
	// perByte is the postings a byte of input Reserve expects: the last
	// batch's (Next), postingsPerByte before one was finished.
	perByte float64
}

// A batch holds at most 2^26 documents with 2^27 distinct terms (some 6 GB
// of text); the log word keeps a tf of at most 2^11-1.
const (
	logTFBits      = 11
	logDocBits     = 26
	logTermShift   = logDocBits + logTFBits
	maxBuilderDocs = 1<<logDocBits - 1
)

// Finish sorts the log a run of terms at a time, each run some
// finishPasses-th of the log's postings and at least finishPassMin, so that
// the sort's buffer is a quarter of the log (on large runs the builders'
// buffers are most of the first indexing's heap: issue 18's memory bound);
// a builder told to (SetOnePass) sorts it in one pass, which takes some
// three quarters of the time (BenchmarkBuilderFinish) for a buffer the
// size of the log.
const (
	finishPasses  = 4
	finishPassMin = 1 << 16
)

// SetOnePass makes Finish sort the log in one pass (see finishPasses), for
// this batch and those Next hands on to.
func (b *Builder) SetOnePass(on bool) { b.onePass = on }

// SortBufferExtra is about how many bytes more a one-pass sort takes than
// finishPasses for a batch of inputBytes (its log estimated at
// postingsPerByte, above what runs show; a posting sorted in 4 bytes, as
// a batch of at most narrowDocs documents does): for the owner's memory
// bound.
func SortBufferExtra(inputBytes int64) int64 {
	sortBytes := int64(float64(inputBytes)*postingsPerByte) * 4
	return sortBytes - sortBytes/finishPasses
}

// Next returns a builder for the worker's next batch, which takes over this
// one's buffers: its log and sort buffer (the batch's largest, some 13 MB
// each at 16 MB of input), made anew for each batch their clearing and
// first touch cost a tenth of the indexing time; its term table, emptied,
// and its other columns, which made anew were some 0.4 GB of garbage of
// the first index of 100,000 files (2 GB of the 1 GB run's), each
// collection's work under a memory limit (issue 33). inputBytes is the
// bytes read into this batch: the next one's Reserve expects as many
// postings a byte as this one had (where postingsPerByte is made for the
// runs that have most: a log made at it was twice the 100,000 files'). This
// builder must be finished, and is used no more.
func (b *Builder) Next(inputBytes int64) *Builder {
	n := &Builder{terms: b.terms, layerMin: b.layerMin, maxDocs: b.maxDocs, onePass: b.onePass, perByte: b.perByte}
	if inputBytes > 0 && len(b.log) > 0 {
		// Not below an eighth of postingsPerByte: a batch of files that
		// made few postings (binary ones, left out) would have the next
		// one's log grow a quarter at a time from almost nothing.
		n.perByte = max(float64(len(b.log))/float64(inputBytes)*reserveRoom, postingsPerByte/8)
	}
	n.terms.reset()
	n.log, n.sorted, n.sorted32, n.wide = b.log[:0], b.sorted[:0], b.sorted32[:0], b.wide[:0]
	n.tf, n.count, n.touched = b.tf[:0], b.count[:0], b.touched[:0]
	n.key, n.group, n.dl, n.part = b.key[:0], b.group[:0], b.dl[:0], b.part[:0]
	n.partDF = b.partDF[:0]
	*b = Builder{}
	return n
}

// reserveRoom is the room Reserve makes beyond the postings a byte the last
// batch had.
const reserveRoom = 1.1

// NewBuilder returns an empty builder; terms with layerMin postings or more
// in the batch are split into high and low lists (Tuning.LayerMin).
func NewBuilder(layerMin int) *Builder {
	return &Builder{terms: NewTermTable(), layerMin: layerMin, maxDocs: maxBuilderDocs}
}

// Count tokenizes one document into the builder's pending term counts and
// returns how many terms it has; 0 leaves nothing pending. Add adds the
// document counted.
func (b *Builder) Count(text []byte) int {
	b.tokens = 0
	for i := 0; ; {
		term, h, head, end := b.scan.next(text, i)
		if term == nil {
			return b.tokens
		}
		b.addToken(term, h, head)
		i = end
	}
}

func (b *Builder) addToken(term []byte, h, head uint64) {
	id := b.terms.id(term, h, head)
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

// Add adds the document whose terms Count counted, with its key (the
// search returns one document of a key: see topK), its group and its
// partition (statistics are kept by partition: see Stats); it returns the
// document's id in the segment. A full batch (Full) takes no more: Add
// then drops the document counted and reports false, and Refused counts
// it.
func (b *Builder) Add(key uint64, group, part uint32) (uint32, bool) {
	if b.Full() {
		for _, id := range b.touched {
			b.tf[id] = 0
		}
		b.touched, b.tokens = b.touched[:0], 0
		b.refused++
		return 0, false
	}
	doc := uint32(len(b.key))
	b.key = append(b.key, key)
	b.group = append(b.group, group)
	dl := min(b.tokens, 0xffff)
	b.dl = append(b.dl, uint16(dl))
	b.part = append(b.part, part)
	for int(part) >= len(b.partDocs) {
		b.partDocs = append(b.partDocs, 0)
		b.partLen = append(b.partLen, 0)
	}
	for _, id := range b.touched {
		tf := min(b.tf[id], 1<<logTFBits-1)
		b.log = append(b.log, uint64(id)<<logTermShift|uint64(doc)<<logTFBits|uint64(tf))
		b.tf[id] = 0
		b.count[id]++
	}
	b.partDocs[part]++
	b.partLen[part] += int64(dl)
	b.touched = b.touched[:0]
	b.tokens = 0
	return doc, true
}

// Postings and documents per input byte, a little above what generated and
// real runs show (0.16 and 0.01), so that Reserve makes room once.
const (
	postingsPerByte = 0.18
	docsPerByte     = 0.012
)

// Reserve makes room for what n more input bytes will likely add, so that
// the builder's slices do not grow by doubling (and copying) many times. It
// returns how many more documents it made room for, for the owner's
// columns. The log, the batch's largest slice, grows by a quarter when it
// must: doubled, the last growth of a batch left most of it unused, and
// every byte of it is touched (cleared) when it is made.
func (b *Builder) Reserve(n int64) int {
	if n <= 0 {
		return 0
	}
	n = min(n, 64<<20) // past that, doubling costs little against the reading
	perByte := b.perByte
	if perByte == 0 {
		perByte = postingsPerByte
	}
	if need := len(b.log) + int(float64(n)*perByte); need > cap(b.log) {
		// Made just large enough for each Reserve, the log would be copied
		// again for each owner's input.
		b.log = slices.Grow(b.log, max(need, cap(b.log)+cap(b.log)/4)-len(b.log))
	}
	p := int(float64(n) * docsPerByte)
	b.key, b.group, b.dl = slices.Grow(b.key, p), slices.Grow(b.group, p), slices.Grow(b.dl, p)
	b.part = slices.Grow(b.part, p)
	return p
}

// Full reports whether the batch holds as many documents as a segment can
// number (maxBuilderDocs): it must be finished before another is added.
func (b *Builder) Full() bool { return len(b.key) >= b.maxDocs }

// SetMaxDocs lowers the most documents the batch takes, for tests of what
// an owner does with a full batch; n above the segment's limit is ignored.
func (b *Builder) SetMaxDocs(n int) { b.maxDocs = min(n, maxBuilderDocs) }

// Refused returns how many documents Add refused because the batch was
// full.
func (b *Builder) Refused() int { return b.refused }

// Docs returns how many documents the builder holds.
func (b *Builder) Docs() int { return len(b.key) }

// PendingTerms returns the local term ids of the document counted and not
// yet added (between Count and Add).
func (b *Builder) PendingTerms() []int32 { return b.touched }

// Terms returns the builder's local terms, for Dict.Assign.
func (b *Builder) Terms() *TermTable { return b.terms }

// Finish lays the batch out as a segment with global term ids (globalIDs
// maps each local id: Dict.Assign). The segment shares nothing with the
// builder, so the builder's tables are garbage once it is dropped (but the
// buffers Next hands over).
func (b *Builder) Finish(globalIDs []uint32) *Segment {
	n := len(globalIDs)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, c int32) int { return cmp.Compare(globalIDs[a], globalIDs[c]) })
	// Counting sort of the log by term, in the segment's term order, a run
	// of terms a pass: each pass reads the whole log and sorts the
	// postings of its terms, so that the sort's buffer is some
	// finishPasses-th of the log (the batch's largest slice, which every
	// worker holds) and not a second log. The log is in doc order, so each
	// term's postings stay in doc order.
	pass, at := make([]int32, n), make([]uint32, n)
	limit := max(len(b.log)/finishPasses, finishPassMin)
	if b.onePass {
		limit = max(len(b.log), finishPassMin)
	}
	if b.passLimit > 0 { // tests
		limit = b.passLimit
	}
	var ends []int // where each pass's terms end in order
	size := 0
	for i, id := range order {
		if c := int(b.count[id]); size > 0 && size+c > limit {
			ends, size = append(ends, i), 0
		}
		pass[id], at[id] = int32(len(ends)), uint32(size)
		size += int(b.count[id])
	}
	ends = append(ends, n)

	w := newSegmentWriter(b.key, b.group, b.dl, b.layerMin, n, len(b.log)*2)
	inPart := make([]uint32, len(b.partDocs))
	var parts []uint32
	lastGlobal := uint32(0)
	// A batch of fewer than narrowDocs documents sorts its postings as
	// their document and tf bits alone (the term is the run they are in),
	// half the buffer; a term's are widened again for the segment's writer.
	narrow := len(b.key) <= narrowDocs && !b.wideSort
	sorted, sorted32, lo := b.sorted[:0], b.sorted32[:0], 0
	for p, hi := range ends {
		size := 0
		for _, id := range order[lo:hi] {
			size += int(b.count[id])
		}
		// Every place of sorted is written once: no need to clear it.
		if narrow {
			sorted32 = room(sorted32, size)
			for _, e := range b.log {
				if id := e >> logTermShift; pass[id] == int32(p) {
					sorted32[at[id]] = uint32(e)
					at[id]++
				}
			}
		} else {
			sorted = room(sorted, size)
			for _, e := range b.log {
				if id := e >> logTermShift; pass[id] == int32(p) {
					sorted[at[id]] = e
					at[id]++
				}
			}
		}
		k := 0
		for _, id := range order[lo:hi] {
			c := int(b.count[id])
			var entries []uint64
			if narrow {
				b.wide = room(b.wide, c)
				for j, e := range sorted32[k : k+c] {
					b.wide[j] = uint64(e)
				}
				entries = b.wide
			} else {
				entries = sorted[k : k+c]
			}
			k += c
			w.addTerm(globalIDs[id], entries)
			// The term's df in each partition: its documents there.
			for _, e := range entries {
				p := b.part[uint32(e>>logTFBits)&maxBuilderDocs]
				if inPart[p] == 0 {
					parts = append(parts, p)
				}
				inPart[p]++
			}
			b.partDF = binary.AppendUvarint(b.partDF, uint64(globalIDs[id]-lastGlobal))
			b.partDF = binary.AppendUvarint(b.partDF, uint64(len(parts)))
			for _, p := range parts {
				b.partDF = binary.AppendUvarint(b.partDF, uint64(p))
				b.partDF = binary.AppendUvarint(b.partDF, uint64(inPart[p]))
				inPart[p] = 0
			}
			parts, lastGlobal = parts[:0], globalIDs[id]
		}
		lo = hi
	}
	b.sorted, b.sorted32 = sorted, sorted32
	return w.finish()
}

// narrowDocs is the most documents of a batch whose postings Finish sorts
// as 32-bit words: a document's bits and a tf's.
const narrowDocs = 1 << (32 - logTFBits)

// room returns s with length n, made anew (with an eighth more, for the
// next batches' slightly larger) only when its capacity is short: the
// sort's buffers, exactly as large as a batch needs where growing them by
// append's rule left a third of them unused (issue 33).
func room[E uint32 | uint64](s []E, n int) []E {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]E, n, n+n/8)
}

// A segmentWriter lays a segment out term by term, in ascending global
// id: the builder's Finish gives it each term's slice of the sorted log,
// and Merge each term's postings gathered from its sources, one term at a
// time, so that a merge holds no log of every posting.
type segmentWriter struct {
	s    *Segment
	post []byte
	cut  *impactCut
	docs int
}

// newSegmentWriter starts a segment of these documents' keys, groups and
// lengths, with room for terms terms and postBytes of postings.
func newSegmentWriter(key []uint64, group []uint32, dl []uint16, layerMin, terms, postBytes int) *segmentWriter {
	docs := len(key)
	s := &Segment{
		terms: make([]uint32, 0, terms), meta: make([]termMeta, 0, terms+1),
		dead: make([]uint64, (docs+63)/64),
	}
	s.narrow(key, group, dl)
	cut := newImpactCut(dl, layerMin)
	s.refAvgdl = cut.avgdl
	return &segmentWriter{s: s, post: make([]byte, 0, postBytes), cut: cut, docs: docs}
}

// addTerm adds a term with its postings: packed log words in document
// order, of which only the document and tf bits are read.
func (w *segmentWriter) addTerm(global uint32, entries []uint64) {
	s, cut, post := w.s, w.cut, w.post
	i := len(s.terms)
	s.terms = append(s.terms, global)
	s.meta = append(s.meta, termMeta{off: uint32(len(post)), skipOff: uint32(len(s.skips))})
	m := &s.meta[i]
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
		s.layers.Set(uint32(i), *l)
		m.flags |= metaSplit
		m.maxTF, m.maxImpact = max(l.maxTF[0], l.maxTF[1]), max(l.maxImpact[0], l.maxImpact[1])
	} else {
		post, m.maxTF, m.maxImpact = s.appendList(post, entries, side{cut: cut, from: -1})
	}
	s.addDense(i, entries, w.docs)
	w.post = post
}

// finish ends the segment.
func (w *segmentWriter) finish() *Segment {
	s, post := w.s, w.post
	s.meta = append(s.meta, termMeta{off: uint32(len(post)), skipOff: uint32(len(s.skips))})
	s.terms, s.meta = slices.Clip(s.terms), slices.Clip(s.meta)
	s.sampleTerms()
	s.post = slices.Clip(post)
	if len(post) < cap(post)*3/4 {
		s.post = slices.Clone(post)
	}
	s.skips = slices.Clip(s.skips)
	return s
}

// appendList encodes entries (packed log words of one term, in document order)
// as a posting list with its skips at the end of post, and returns the
// largest tf and impact in it. It takes the entries of one side.
func (s *Segment) appendList(post []byte, entries []uint64, sd side) ([]byte, uint16, float32) {
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
		// tf 1, most postings, reads its impact from a table made with the
		// same division, where a division a posting cost some 2% of Finish
		// (BenchmarkBuilderFinish).
		var impact float64
		if tf == 1 {
			impact = sd.cut.impact1[sd.cut.dl[doc]]
		} else {
			impact = impactOf(float64(tf), sd.cut.norms[sd.cut.dl[doc]])
		}
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
// in enough of the segment's documents.
func (s *Segment) addDense(i int, entries []uint64, docs int) {
	if n := len(entries); n >= docs/denseFraction && n > skipEvery {
		s.dense.Set(uint32(i), newDenseTerm(entries, docs))
		s.meta[i].flags |= metaDense
	}
}
