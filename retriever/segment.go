package retriever

import (
	"encoding/binary"
	"slices"
)

// A segment holds the pieces (documents) indexed in one batch and their
// postings. It is immutable once committed, but for its dead-doc bits, which
// are written only under the index's write lock.
//
// Per piece it keeps a fixed set of small columns, never the text: the text is
// read again from the file for the few pieces a search returns. Postings are
// per term, varint-encoded: (doc delta << 1 | tf==1), then tf when it is not 1.
type segment struct {
	hash  []uint64 // dedupe key: hash of the piece's text as returned
	file  []uint32 // file id
	line  []uint32 // 0-based line
	start []uint32 // byte offset of the piece in its line, as written in the file
	blen  []uint32 // byte length of the piece in the file
	dl    []uint16 // number of terms
	conv  []uint32 // conversation id (0: none, plain files and unfielded records)
	flags []uint8
	dead  []uint64 // bitset

	masked   map[uint32]string // text of pieces whose text differs from the file's (masking)
	toldHash map[uint32]uint64 // hash of the whole trimmed message of told pieces

	terms []uint32 // global term ids, ascending
	offs  []uint32 // postings of terms[i] are post[offs[i]:offs[i+1]]
	post  []byte
	// per term: the largest tf and the smallest piece length of its postings,
	// which bound its score (MaxScore), and its skip entries
	maxTF    []uint16
	minDL    []uint16
	skipOffs []uint32
	skips    []skipEntry
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

func (s *segment) isDead(d uint32) bool { return s.dead[d>>6]&(1<<(d&63)) != 0 }

func (s *segment) kill(d uint32) { s.dead[d>>6] |= 1 << (d & 63) }

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
// offset after it, so that advance can jump over blocks without decoding them.
type skipEntry struct {
	lastDoc uint32
	end     uint32
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

// advance moves to the first doc at or after target, if not there already.
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
	for it.next() {
		if it.doc >= target {
			return true
		}
	}
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

// builder collects the pieces of one batch with local term ids.
type builder struct {
	seg     segment
	terms   *termTable
	post    [][]byte
	lastDoc []uint32
	tf      []uint32
	count   []uint32 // postings per term
	maxTF   []uint16
	minDL   []uint16
	skips   map[int32][]skipEntry
	touched []int32
	scan    termScanner
	tokens  int // terms of the current piece

	// per agent: pieces, total length and local df
	agentDocs  map[uint32]int
	agentLen   map[uint32]int64
	agentDF    map[uint32][]uint32
	inputBytes int64
}

func newBuilder() *builder {
	return &builder{
		terms:     newTermTable(),
		agentDocs: map[uint32]int{},
		agentLen:  map[uint32]int64{},
		agentDF:   map[uint32][]uint32{},
	}
}

// pieceTerms tokenizes one piece into the builder's pending term counts and
// returns how many terms it has; 0 leaves nothing pending.
func (b *builder) pieceTerms(text []byte) int {
	b.tokens = 0
	b.scan.each(text, b.addToken)
	return b.tokens
}

func (b *builder) addToken(term []byte) {
	id := b.terms.id(term)
	if int(id) >= len(b.tf) {
		b.post = append(b.post, nil)
		b.lastDoc = append(b.lastDoc, ^uint32(0))
		b.tf = append(b.tf, 0)
		b.count = append(b.count, 0)
		b.maxTF = append(b.maxTF, 0)
		b.minDL = append(b.minDL, 0xffff)
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
	dl := b.tokens
	if dl > 0xffff {
		dl = 0xffff
	}
	s.dl = append(s.dl, uint16(dl))
	s.conv = append(s.conv, d.conv)
	s.flags = append(s.flags, d.flags)
	df := b.agentDF[agent]
	if len(df) < len(b.tf) {
		df = append(df, make([]uint32, len(b.tf)-len(df))...)
	}
	for _, id := range b.touched {
		tf := b.tf[id]
		delta := uint64(doc - b.lastDoc[id])
		if tf == 1 {
			b.post[id] = binary.AppendUvarint(b.post[id], delta<<1|1)
		} else {
			b.post[id] = binary.AppendUvarint(b.post[id], delta<<1)
			b.post[id] = binary.AppendUvarint(b.post[id], uint64(tf))
		}
		b.lastDoc[id] = doc
		b.tf[id] = 0
		df[id]++
		b.maxTF[id] = max(b.maxTF[id], uint16(min(tf, 0xffff)))
		b.minDL[id] = min(b.minDL[id], uint16(dl))
		b.count[id]++
		if b.count[id]%skipEvery == 0 {
			if b.skips == nil {
				b.skips = map[int32][]skipEntry{}
			}
			b.skips[id] = append(b.skips[id], skipEntry{lastDoc: doc, end: uint32(len(b.post[id]))})
		}
	}
	b.agentDF[agent] = df
	b.agentDocs[agent]++
	b.agentLen[agent] += int64(dl)
	b.touched = b.touched[:0]
	b.tokens = 0
	return doc
}

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

// finish turns the builder into a segment with global term ids; globalID maps
// each local id. It returns the segment and the local-to-global table.
func (b *builder) finish(globalIDs []uint32) *segment {
	s := &b.seg
	n := len(globalIDs)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, c int32) int { return int(int64(globalIDs[a]) - int64(globalIDs[c])) })
	s.terms = make([]uint32, n)
	s.offs = make([]uint32, n+1)
	s.maxTF = make([]uint16, n)
	s.minDL = make([]uint16, n)
	s.skipOffs = make([]uint32, n+1)
	size := 0
	for _, p := range b.post {
		size += len(p)
	}
	s.post = make([]byte, 0, size)
	for i, id := range order {
		s.terms[i] = globalIDs[id]
		s.offs[i] = uint32(len(s.post))
		s.post = append(s.post, b.post[id]...)
		s.maxTF[i], s.minDL[i] = b.maxTF[id], b.minDL[id]
		s.skipOffs[i] = uint32(len(s.skips))
		s.skips = append(s.skips, b.skips[id]...)
	}
	s.offs[n] = uint32(len(s.post))
	s.skipOffs[n] = uint32(len(s.skips))
	s.dead = make([]uint64, (len(s.hash)+63)/64)
	return s
}
