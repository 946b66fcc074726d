package retriever

import (
	"cmp"
	"encoding/binary"
	"math"
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

// termMeta is what a segment keeps of a term besides its postings, side by
// side so that a query reads it with one cache miss. The largest tf and
// the largest impact of its postings bound its score (MaxScore). A
// posting's impact is its bm25 without idf and k1+1, tf/(tf +
// k1(1-b+b·dl/refAvgdl)), at the batch's average piece length: see
// scoreBound for how it bounds the score at the index's.
type termMeta struct {
	off       uint32 // postings: post[off:] up to the next term's off
	skipOff   uint32 // skip entries: skips[skipOff:] up to the next term's
	maxImpact float32
	maxTF     uint16
	flags     uint8 // metaSplit, metaDense: the term is in layers, dense
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

// A term with many postings in a segment keeps them as two lists, each in
// piece order with its own skips: the few with the highest impact (large tf
// in a short piece) and the rest. A query scores the high list first, as it
// does a rare term's, and the threshold that sets leaves the low list's
// blocks out of reach, where in one list the best pieces are spread over
// most blocks and keep them all in reach. Each posting is in one list only.
const (
	// defaultLayerMin is the fewest postings a term must have to be split.
	defaultLayerMin = 128
	// layerFraction: about 1/layerFraction of a term's postings are high.
	layerFraction = 32
	// impactBuckets is how finely impacts are told apart when choosing the cut.
	impactBuckets = 1 << 12
)

// layers says where a split term's low list begins, and bounds each list.
type layers struct {
	split     uint32 // byte offset of the low list in the term's postings
	skipSplit uint32 // index of the low list's first skip in the term's skips
	maxTF     [2]uint16
	maxImpact [2]float32
	// dl holds the length of each piece of the high list, in its order
	// (longMark: see the segment's dl): a query scores most of the high
	// list's pieces, and reading their lengths here, in order, spares a
	// cache miss each in the segment's column. A byte a high posting.
	dl []uint8
}

// list is one posting list of a segment's term: the whole term's, or one of
// its layers (0 high, 1 low).
type list struct {
	it        postingIter
	maxTF     uint16
	maxImpact float32
	// dense is the whole term's bit set, not the list's: a lookup in it
	// finds the piece in whichever list holds it (callers look a term up
	// once, whichever of its lists they ask)
	dense *denseTerm
	dls   []uint8 // a high list's lengths (see layers)
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

const (
	flagReadingMask = 0b11 // note, told, said
	flagUnfielded   = 1 << 2
	flagMasked      = 1 << 3
)

var readingOfFlag = [...]Reading{ReadingNote, ReadingTold, ReadingSaid, ReadingNote}

func flagOfReading(r Reading) uint8 {
	switch r {
	case ReadingTold:
		return 1
	case ReadingSaid:
		return 2
	}
	return 0
}

func (s *segment) docs() int { return len(s.hash) }

// fileRun says that pieces from lo on (up to the next run) are of file.
type fileRun struct {
	lo, file uint32
}

// A term in at least 1/denseFraction of a segment's pieces also gets a bit
// set over the pieces, so that looking it up in a piece (for a rare term's
// pieces) costs a bit test, not the decoding of a block. For such a term
// the set costs at most about twice its postings, and few terms are that
// frequent (some 16 a segment in generated runs).
const denseFraction = 16

// denseTerm is a term's pieces as bits, with its tf where it is not 1.
type denseTerm struct {
	bits []uint64
	// The pieces with tf > 1, by window of denseWindow pieces: window w's
	// are tfLow[tfAt[w]:tfAt[w+1]], each as its place in the window, so that
	// a lookup searches a few dozen bytes, and an entry takes three bytes.
	tfAt  []uint32
	tfLow []uint16
	tfs   []uint8           // the tf, or bigTFMark
	bigTF map[uint32]uint16 // tfs of bigTFMark and more, by piece
	// winMax is the largest tf of each window (0: none has the term;
	// bigTFMark: that or more), which bounds the term's score in its pieces
	// far tighter than its largest tf over the segment.
	winMax []uint8
}

const (
	denseWindow = 1 << 10
	bigTFMark   = 0xff
)

// newDenseTerm sets the bits of a term's entries (packed log words, in
// piece order).
func newDenseTerm(entries []uint64, docs int) *denseTerm {
	windows := (docs + denseWindow - 1) / denseWindow
	t := &denseTerm{bits: make([]uint64, (docs+63)/64), tfAt: make([]uint32, windows+1), winMax: make([]uint8, windows)}
	for _, e := range entries {
		doc := uint32(e>>logTFBits) & maxBuilderDocs
		tf := uint32(e & (1<<logTFBits - 1))
		t.bits[doc>>6] |= 1 << (doc & 63)
		w := &t.winMax[doc/denseWindow]
		*w = max(*w, uint8(min(tf, bigTFMark)))
		if tf != 1 {
			t.tfAt[doc/denseWindow+1]++
			t.tfLow = append(t.tfLow, uint16(doc%denseWindow))
			if tf >= bigTFMark {
				if t.bigTF == nil {
					t.bigTF = map[uint32]uint16{}
				}
				t.bigTF[doc] = uint16(tf)
				tf = bigTFMark
			}
			t.tfs = append(t.tfs, uint8(tf))
		}
	}
	for w := range windows {
		t.tfAt[w+1] += t.tfAt[w]
	}
	return t
}

// has reports whether piece d has the term.
func (t *denseTerm) has(d uint32) bool { return t.bits[d>>6]&(1<<(d&63)) != 0 }

// windowMaxTF bounds the term's tf in piece d: the largest of its window.
func (t *denseTerm) windowMaxTF(d uint32) uint16 {
	if m := t.winMax[d/denseWindow]; m != bigTFMark {
		return uint16(m)
	}
	return math.MaxUint16
}

// tf returns the term's tf in piece d, 0 when the piece lacks it.
func (t *denseTerm) tf(d uint32) uint32 {
	if t.bits[d>>6]&(1<<(d&63)) == 0 {
		return 0
	}
	w := d / denseWindow
	lo, hi := t.tfAt[w], t.tfAt[w+1]
	i, ok := slices.BinarySearch(t.tfLow[lo:hi], uint16(d%denseWindow))
	if !ok {
		return 1
	}
	if tf := t.tfs[int(lo)+i]; tf != bigTFMark {
		return uint32(tf)
	}
	return uint32(t.bigTF[d])
}

// wideMark stands in a 16-bit column for a value kept in wide.
const wideMark = 0xffff

func (s *segment) fileOf(d uint32) uint32 {
	i, _ := slices.BinarySearchFunc(s.fileRuns, d+1, func(r fileRun, t uint32) int { return cmp.Compare(r.lo, t) })
	return s.fileRuns[i-1].file
}

// lineGroup is how many pieces share a base line. Pieces of a file are in
// line order and a line has a piece or a few, so a piece's line is a step of
// a byte from its group's base nearly always: a byte and a bit a piece, not
// four.
const lineGroup = 64

// farMark stands in lineStep for a line kept in farLine.
const farMark = 0xff

func (s *segment) lineOf(d uint32) uint32 {
	if v := s.lineStep[d]; v != farMark {
		return s.lineBase[d/lineGroup] + uint32(v)
	}
	i, _ := slices.BinarySearchFunc(s.farLine, d, func(e farLine, d uint32) int { return cmp.Compare(e.doc, d) })
	return s.farLine[i].line
}

// farLine is the line of a piece whose step from its group's base does not
// fit a byte: in a group that spans the end of a long file and the start of
// the next. A slice, not a map: a run of many such files keeps 8 bytes each.
type farLine struct{ doc, line uint32 }

// narrowLines lays out the line column: each group's base is its smallest
// line (groups can span files, whose lines start again at 0).
func (s *segment) narrowLines(line []uint32) {
	s.lineBase = make([]uint32, (len(line)+lineGroup-1)/lineGroup)
	s.lineStep = make([]uint8, len(line))
	for g := range s.lineBase {
		s.lineBase[g] = slices.Min(line[g*lineGroup : min(len(line), (g+1)*lineGroup)])
	}
	for d, l := range line {
		step := l - s.lineBase[d/lineGroup]
		if step >= farMark {
			s.farLine = append(s.farLine, farLine{uint32(d), l})
			step = farMark
		}
		s.lineStep[d] = uint8(step)
	}
}

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

func (s *segment) startOf(d uint32) uint32 {
	if v := s.start16[d]; v != wideMark {
		return uint32(v)
	}
	return s.wide[d][0]
}

func (s *segment) blenOf(d uint32) uint32 {
	if v := s.blen16[d]; v != wideMark {
		return uint32(v)
	}
	return s.wide[d][1]
}

func (s *segment) convOf(d uint32) uint32 {
	if s.conv32 != nil {
		return s.conv32[d]
	}
	return s.convs[s.conv16[d]]
}

// rawColumns are the columns of pieces as a builder collects them.
type rawColumns struct {
	hash  []uint64
	file  []uint32
	line  []uint32
	start []uint32
	blen  []uint32
	dl    []uint16
	conv  []uint32
	flags []uint8

	masked   map[uint32]string
	toldHash map[uint32]uint64
}

// narrow lays raw columns out as a segment's.
func (s *segment) narrow(src *rawColumns) {
	s.hash, s.flags = slices.Clone(src.hash), slices.Clone(src.flags)
	s.narrowLines(src.line)
	s.dl = make([]uint8, len(src.dl))
	for d, l := range src.dl {
		if l >= longMark {
			if s.longDL == nil {
				s.longDL = map[uint32]uint16{}
			}
			s.longDL[uint32(d)], l = l, longMark
		}
		s.dl[d] = uint8(l)
	}
	s.masked, s.toldHash = src.masked, src.toldHash
	n := len(src.hash)
	for d := 0; d < n; d++ {
		if d == 0 || src.file[d] != src.file[d-1] {
			s.fileRuns = append(s.fileRuns, fileRun{lo: uint32(d), file: src.file[d]})
		}
	}
	s.fileRuns = slices.Clip(s.fileRuns)
	s.start16, s.blen16 = make([]uint16, n), make([]uint16, n)
	for d := 0; d < n; d++ {
		st, bl := src.start[d], src.blen[d]
		if st >= wideMark || bl >= wideMark {
			if s.wide == nil {
				s.wide = map[uint32][2]uint32{}
			}
			s.wide[uint32(d)] = [2]uint32{st, bl}
			s.start16[d], s.blen16[d] = wideMark, wideMark
			continue
		}
		s.start16[d], s.blen16[d] = uint16(st), uint16(bl)
	}
	// Conversations: a batch rarely holds more distinct ids than 16 bits
	// number; one that does keeps them whole.
	index := map[uint32]uint16{}
	s.conv16 = make([]uint16, n)
	for d := 0; d < n; d++ {
		c := src.conv[d]
		i, ok := index[c]
		if !ok {
			if len(s.convs) == 1<<16 {
				s.conv16, s.convs, s.conv32 = nil, nil, slices.Clone(src.conv)
				return
			}
			i = uint16(len(s.convs))
			index[c] = i
			s.convs = append(s.convs, c)
		}
		s.conv16[d] = i
	}
}

func (s *segment) isDead(d uint32) bool { return s.dead[d>>6]&(1<<(d&63)) != 0 }

func (s *segment) kill(d uint32) {
	if !s.isDead(d) {
		s.dead[d>>6] |= 1 << (d & 63)
		s.ndead++
	}
}

// postingIter decodes a posting list; with skips it can jump over blocks.
type postingIter struct {
	p     []byte
	pos   int
	last  uint32 // the base of the next delta
	doc   uint32 // the current doc, once next or advance returned true
	tf    uint32
	skips []skipEntry
	si    int
	valid bool
}

// skipEntry marks the end of a block of postings: its last doc and the byte
// offset after it, so that advance can jump over blocks without decoding them,
// and the block's largest tf and largest impact, which bound the score of
// any of its pieces (block-max; see scoreBound).
type skipEntry struct {
	lastDoc   uint32
	end       uint32
	maxTF     uint16
	maxImpact float32
}

// ceil32 rounds an impact up to a float32, so that a bound made from it stays a bound.
func ceil32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// skipEvery is how many postings a block holds.
const skipEvery = 128

func (it *postingIter) next() bool {
	if it.pos >= len(it.p) {
		it.valid = false
		return false
	}
	v, pos := uvarintAt(it.p, it.pos)
	it.pos = pos
	it.doc = it.last + uint32(v>>1)
	it.last = it.doc
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < it.doc {
		it.si++
	}
	if v&1 == 1 {
		it.tf = 1
	} else {
		t, pos := uvarintAt(it.p, it.pos)
		it.pos = pos
		it.tf = uint32(t)
	}
	it.valid = true
	return true
}

// seek jumps over the blocks that end before target without decoding, so
// that blockBound reads the block target would be in.
func (it *postingIter) seek(target uint32) {
	if it.valid && it.doc >= target {
		return
	}
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < target {
		if e := int(it.skips[it.si].end); e > it.pos {
			it.pos, it.last = e, it.skips[it.si].lastDoc
			it.valid = false
		}
		it.si++
	}
}

// advance moves to the first doc at or after target, if not there already.
// It jumps over whole blocks, then decodes the rest in a tight loop that
// reads a tf only where it stops.
func (it *postingIter) advance(target uint32) bool {
	if it.valid && it.doc >= target {
		return true
	}
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < target {
		if e := int(it.skips[it.si].end); e > it.pos {
			it.pos, it.last = e, it.skips[it.si].lastDoc
		}
		it.si++
	}
	p, pos, last := it.p, it.pos, it.last
	for pos < len(p) {
		// Deltas take one byte or, for middling terms, two, nearly always.
		var v uint64
		if b := p[pos]; b < 0x80 {
			v, pos = uint64(b), pos+1
		} else if pos+1 < len(p) && p[pos+1] < 0x80 {
			v, pos = uint64(b&0x7f)|uint64(p[pos+1])<<7, pos+2
		} else {
			v, pos = uvarintAt(p, pos)
		}
		doc := last + uint32(v>>1)
		last = doc
		tf := uint32(1)
		if v&1 == 0 {
			var t uint64
			if b := p[pos]; b < 0x80 {
				t, pos = uint64(b), pos+1
			} else {
				t, pos = uvarintAt(p, pos)
			}
			tf = uint32(t)
		}
		if doc >= target {
			it.pos, it.last, it.doc, it.tf, it.valid = pos, last, doc, tf, true
			for it.si < len(it.skips) && it.skips[it.si].lastDoc < doc {
				it.si++
			}
			return true
		}
	}
	it.pos, it.last, it.valid = pos, last, false
	return false
}

// appendPosting encodes a posting: the delta from the last piece, shifted
// left, its low bit set when tf is 1 (nearly always); else the tf follows.
func appendPosting(post []byte, delta uint64, tf uint32) []byte {
	if tf == 1 {
		return binary.AppendUvarint(post, delta<<1|1)
	}
	post = binary.AppendUvarint(post, delta<<1)
	return binary.AppendUvarint(post, uint64(tf))
}

// uvarintAt decodes the uvarint at p[pos:] and returns the position after
// it. Loops test for the one-byte form inline and call this for the rest:
// the two-byte form (most deltas of middling terms) first.
func uvarintAt(p []byte, pos int) (uint64, int) {
	if b := p[pos]; b < 0x80 {
		return uint64(b), pos + 1
	}
	if pos+1 < len(p) && p[pos+1] < 0x80 {
		return uint64(p[pos]&0x7f) | uint64(p[pos+1])<<7, pos + 2
	}
	x, n := binary.Uvarint(p[pos:])
	return x, pos + n
}

func newPostingIter(p []byte) postingIter {
	// The first delta counts from -1, so that doc 0 has a delta of 1.
	return postingIter{p: p, last: ^uint32(0)}
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

// builder collects the pieces of one batch with local term ids. Postings
// are logged as packed (term, doc, tf) words in doc order and laid out per
// term by a counting sort when the batch is finished: no per-term slices grow
// while indexing, and nothing in the builder holds pointers for the GC to scan.
type builder struct {
	seg     rawColumns
	terms   *termTable
	log     []uint64 // term<<(logDocBits+logTFBits) | doc<<logTFBits | tf
	sorted  []uint64 // room for the log sorted by term, in finish
	tf      []uint32 // count of each term in the current piece
	count   []uint32 // postings per term
	touched []int32
	scan    termScanner
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
	return &builder{terms: newTermTable(), layerMin: layerMin}
}

// pieceTerms tokenizes one piece into the builder's pending term counts and
// returns how many terms it has; 0 leaves nothing pending.
func (b *builder) pieceTerms(text []byte) int {
	b.tokens = 0
	b.scan.each(text, b.addToken)
	return b.tokens
}

func (b *builder) addToken(term []byte, h uint64) {
	id := b.terms.id(term, h)
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

// docColumns are the columns of one piece.
type docColumns struct {
	hash  uint64
	file  uint32
	line  uint32
	start uint32
	blen  uint32
	conv  uint32
	flags uint8
}

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

// impactCut chooses, for a term with many postings, the impact bucket from
// which its postings are high: impact is the term's bm25 in the piece
// without idf, at the batch's average piece length. The split needs no more
// than an order (the query's own bounds keep it exact), so the batch's
// average stands in for the index's.
type impactCut struct {
	layerMin int
	dl       []uint16
	avgdl    float64
	norms    []float64 // lengthNorm by piece length, for the lengths in the batch
	once     []uint16  // the bucket of tf 1 by piece length: most entries'
	hist     []uint32
	buckets  []uint16 // of the last term cut, by entry
}

// side selects the entries of one list of a split term: those whose impact
// bucket is at least from (high) or below it; from < 0 takes every entry.
type side struct {
	cut  *impactCut
	from int
	high bool
}

// takes reports whether the side takes the j-th entry of the term last cut.
func (sd side) takes(j int) bool {
	return sd.from < 0 || (int(sd.cut.buckets[j]) >= sd.from) == sd.high
}

func newImpactCut(dl []uint16, layerMin int) *impactCut {
	total, longest := 0, uint16(0)
	for _, l := range dl {
		total += int(l)
		longest = max(longest, l)
	}
	c := &impactCut{dl: dl, layerMin: layerMin, norms: make([]float64, int(longest)+1), hist: make([]uint32, impactBuckets)}
	c.avgdl = max(float64(total)/float64(max(len(dl), 1)), 1)
	c.once = make([]uint16, len(c.norms))
	for l := range c.norms {
		c.norms[l] = lengthNorm(uint32(l), c.avgdl)
		c.once[l] = uint16(impactBucket(1, c.norms[l]))
	}
	return c
}

// bucket is the impact bucket of a log entry: tf/(tf + norm) in (0, 1).
func (c *impactCut) bucket(e uint64) int {
	doc := uint32(e>>logTFBits) & maxBuilderDocs
	if tf := e & (1<<logTFBits - 1); tf != 1 {
		return impactBucket(float64(tf), c.norms[c.dl[doc]])
	}
	return int(c.once[c.dl[doc]])
}

func impactBucket(tf, norm float64) int {
	return min(int(tf/(tf+norm)*impactBuckets), impactBuckets-1)
}

// high returns the bucket from which a term's entries are high, or -1 when
// the term is not to be split: too few postings, or no cut that leaves
// about 1/layerFraction of them high (a term whose pieces are all alike).
func (c *impactCut) high(entries []uint64) int {
	if len(entries) < c.layerMin {
		return -1
	}
	c.buckets = c.buckets[:0]
	lo, hi := impactBuckets, 0
	for _, e := range entries {
		b := c.bucket(e)
		c.buckets = append(c.buckets, uint16(b))
		c.hist[b]++
		lo, hi = min(lo, b), max(hi, b)
	}
	// Only the buckets between the lowest and highest taken are counted,
	// and cleared for the next term: most terms are short.
	defer clear(c.hist[lo : hi+1])
	want := len(entries) / layerFraction
	n := 0
	for b := hi; b > lo; b-- {
		n += int(c.hist[b])
		if n >= want {
			if n > len(entries)/2 {
				return -1
			}
			return b
		}
	}
	return -1
}
