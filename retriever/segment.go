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
// and conversations with the rare wide value aside), since with postings
// they are most of the index's memory. Postings are per term,
// varint-encoded: (doc delta << 1 | tf==1), then tf when it is not 1.
type segment struct {
	hash  []uint64 // dedupe key: hash of the piece's text as returned
	line  []uint32 // 0-based line
	dl    []uint16 // number of terms
	flags []uint8
	dead  []uint64 // bitset
	ndead int

	fileRuns []fileRun            // the file of each piece: runs by first piece
	start16  []uint16             // byte offset of the piece in its line, as written in the file
	blen16   []uint16             // byte length of the piece in the file
	wide     map[uint32][2]uint32 // start and length of pieces that do not fit 16 bits
	conv16   []uint16             // index into convs
	convs    []uint32             // conversation ids (0: none, plain files and unfielded records)
	conv32   []uint32             // the ids themselves, in a batch with too many for conv16

	masked   map[uint32]string // text of pieces whose text differs from the file's (masking)
	toldHash map[uint32]uint64 // hash of the whole trimmed message of told pieces

	terms []uint32 // global term ids, ascending
	offs  []uint32 // postings of terms[i] are post[offs[i]:offs[i+1]]
	post  []byte
	// per term: the largest tf and the smallest piece length of its postings,
	// which bound its score (MaxScore), and its skip entries
	maxTF    []uint16
	maxRatio []float32
	skipOffs []uint32
	skips    []skipEntry
	dense    map[int]*denseTerm // by term index, for the most frequent terms
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
// the set is smaller than its postings.
const denseFraction = 4

// denseTerm is a term's pieces as bits, with its tf where it is not 1.
type denseTerm struct {
	bits   []uint64
	tfDocs []uint32 // pieces with tf > 1, ascending
	tfs    []uint16
}

func newDenseTerm(post []byte, docs int) *denseTerm {
	t := &denseTerm{bits: make([]uint64, (docs+63)/64)}
	it := newPostingIter(post)
	for it.next() {
		t.bits[it.doc>>6] |= 1 << (it.doc & 63)
		if it.tf != 1 {
			t.tfDocs = append(t.tfDocs, it.doc)
			t.tfs = append(t.tfs, uint16(min(it.tf, 0xffff)))
		}
	}
	return t
}

// tf returns the term's tf in piece d, 0 when the piece lacks it.
func (t *denseTerm) tf(d uint32) uint32 {
	if t.bits[d>>6]&(1<<(d&63)) == 0 {
		return 0
	}
	if i, ok := slices.BinarySearch(t.tfDocs, d); ok {
		return uint32(t.tfs[i])
	}
	return 1
}

// wideMark stands in a 16-bit column for a value kept in wide.
const wideMark = 0xffff

func (s *segment) fileOf(d uint32) uint32 {
	i, _ := slices.BinarySearchFunc(s.fileRuns, d+1, func(r fileRun, t uint32) int { return cmp.Compare(r.lo, t) })
	return s.fileRuns[i-1].file
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
	s.hash, s.line, s.dl, s.flags = slices.Clone(src.hash), slices.Clone(src.line), slices.Clone(src.dl), slices.Clone(src.flags)
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
// and the block's largest tf and largest tf/length, which bound the score of
// any of its pieces (block-max; see scoreBound).
type skipEntry struct {
	lastDoc  uint32
	end      uint32
	maxTF    uint16
	maxRatio float32
}

// ceil32 rounds a ratio up to a float32, so that a bound made from it stays a bound.
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
	v, n := binary.Uvarint(it.p[it.pos:])
	it.pos += n
	it.doc = it.last + uint32(v>>1)
	it.last = it.doc
	for it.si < len(it.skips) && it.skips[it.si].lastDoc < it.doc {
		it.si++
	}
	if v&1 == 1 {
		it.tf = 1
	} else {
		t, n := binary.Uvarint(it.p[it.pos:])
		it.pos += n
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
		// An inlined uvarint: most deltas take one byte.
		var v uint64
		if b := p[pos]; b < 0x80 {
			v = uint64(b)
			pos++
		} else {
			x, n := binary.Uvarint(p[pos:])
			v = x
			pos += n
		}
		doc := last + uint32(v>>1)
		last = doc
		tf := uint32(1)
		if v&1 == 0 {
			if b := p[pos]; b < 0x80 {
				tf = uint32(b)
				pos++
			} else {
				x, n := binary.Uvarint(p[pos:])
				tf = uint32(x)
				pos += n
			}
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

func newPostingIter(p []byte) postingIter {
	// The first delta counts from -1, so that doc 0 has a delta of 1.
	return postingIter{p: p, last: ^uint32(0)}
}

// iter returns an iterator over the postings of the segment's i-th term.
func (s *segment) iter(i int) postingIter {
	it := newPostingIter(s.post[s.offs[i]:s.offs[i+1]])
	it.skips = s.skips[s.skipOffs[i]:s.skipOffs[i+1]]
	return it
}

// termIndex returns the index of a global term in the segment, or -1.
func (s *segment) termIndex(term uint32) int {
	i, ok := slices.BinarySearch(s.terms, term)
	if !ok {
		return -1
	}
	return i
}

// builder collects the pieces of one batch with local term ids. Postings
// are logged as packed (term, doc, tf) words in doc order and laid out per
// term by a counting sort when the batch is finished: no per-term slices grow
// while indexing, and nothing in the builder holds pointers for the GC to scan.
type builder struct {
	seg     rawColumns
	terms   *termTable
	log     []uint64 // term<<(logDocBits+logTFBits) | doc<<logTFBits | tf
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
}

// A batch holds at most 2^26 pieces with 2^27 distinct terms: a single file
// of some 6 GB. A piece of at most 2000 characters has at most 1000 terms.
const (
	logTFBits      = 11
	logDocBits     = 26
	logTermShift   = logDocBits + logTFBits
	maxBuilderDocs = 1<<logDocBits - 1
)

func newBuilder() *builder {
	return &builder{terms: newTermTable()}
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
	b.log = slices.Grow(b.log, int(float64(n)*postingsPerByte))
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
	sorted := make([]uint64, len(b.log))
	for _, e := range b.log {
		id := e >> logTermShift
		sorted[at[id]] = e
		at[id]++
	}
	b.log = nil

	src := &b.seg
	s := &segment{
		terms: make([]uint32, n), offs: make([]uint32, n+1),
		maxTF: make([]uint16, n), maxRatio: make([]float32, n), skipOffs: make([]uint32, n+1),
		dead: make([]uint64, (len(src.hash)+63)/64),
	}
	s.narrow(src)
	post := make([]byte, 0, len(sorted)*2)
	k := 0
	for i, id := range order {
		s.terms[i] = globalIDs[id]
		s.offs[i] = uint32(len(post))
		s.skipOffs[i] = uint32(len(s.skips))
		last := ^uint32(0)
		maxTF, maxRatio := uint16(0), 0.0
		bMaxTF, bRatio := uint16(0), 0.0
		for c := uint32(1); c <= b.count[id]; c++ {
			e := sorted[k]
			k++
			doc := uint32(e>>logTFBits) & maxBuilderDocs
			tf := uint32(e & (1<<logTFBits - 1))
			delta := uint64(doc - last)
			if tf == 1 {
				post = binary.AppendUvarint(post, delta<<1|1)
			} else {
				post = binary.AppendUvarint(post, delta<<1)
				post = binary.AppendUvarint(post, uint64(tf))
			}
			last = doc
			ratio := float64(tf) / float64(max(s.dl[doc], 1))
			maxTF, maxRatio = max(maxTF, uint16(tf)), max(maxRatio, ratio)
			bMaxTF, bRatio = max(bMaxTF, uint16(tf)), max(bRatio, ratio)
			if b.count[id] > skipEvery && (c%skipEvery == 0 || c == b.count[id]) {
				s.skips = append(s.skips, skipEntry{lastDoc: doc, end: uint32(len(post)) - s.offs[i], maxTF: bMaxTF, maxRatio: ceil32(bRatio)})
				bMaxTF, bRatio = 0, 0
			}
		}
		s.maxTF[i], s.maxRatio[i] = maxTF, ceil32(maxRatio)
		if int(b.count[id]) >= len(src.hash)/denseFraction && b.count[id] > skipEvery {
			if s.dense == nil {
				s.dense = map[int]*denseTerm{}
			}
			s.dense[i] = newDenseTerm(post[s.offs[i]:], len(src.hash))
		}
	}
	s.offs[n] = uint32(len(post))
	s.skipOffs[n] = uint32(len(s.skips))
	s.post = slices.Clip(post)
	if len(post) < cap(post)*3/4 {
		s.post = slices.Clone(post)
	}
	s.skips = slices.Clip(s.skips)
	return s
}
