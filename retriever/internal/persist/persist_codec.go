package persist

// This file holds the state blob of the persisted index (spec §15, issue
// 18): what the index knows besides its segments, dictionary and
// statistics, as a committed state holds it: the agents, episodes and
// conversations by id, each segment's dead bits (the segment blobs are
// written once; the bits change after), and every file's state as
// following needs it to go on (corpus.File): identity, size, time, the offset
// read to, the head and window bytes themselves (not fingerprints: the same
// comparison following makes), the pending tail and its documents, the
// pieces' ranges by segment, the line index and the record table.
//
// Every column is one aligned section (bm25.SectionEncoder), the files'
// columns laid end to end and cut by each file's counts. The reopen reads
// it from its mapping (persist.go), each section it reads checked by range
// first, and the states made of it keep their own copy of the small
// columns they point into (ranges, tail terms, conversations: each one
// allocation for all files, len == cap so that an append copies; keep.go);
// the line indexes and record tables (at 1 GB, 88 MB of the blob's 93) stay
// in the mapping, unchecked, until a file's first use checks and copies its
// own (inplace.go). DecodeState, for a blob on the heap, checks and keeps
// them all at once.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"runls/internal/store"
	"runls/recordformat"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// stateBlobMagic opens the state blob: "RLSTATE1".
const stateBlobMagic = 0x3145544154534c52

// savedFile is one file's fixed fields; its variable ones are the counts
// of its values in the files' columns. No pointer, no padding that
// matters: it is written as raw bytes.
type savedFile struct {
	id, agent  uint32
	dev, ino   uint64
	size       int64
	mtime      int64
	ctime      int64
	readPos    int64
	readAt     int64
	commitPos  int64
	commitLine uint32
	flags      uint32

	head, window, tail, path          uint32 // bytes
	ranges, tailDocs, lineIndex, recs uint32 // values
	over, spans, runs, descents       uint32
	convs, tailTerms                  uint32
	// layout is 1 + the record file's layout once decided (0: not yet),
	// firstUnits its first line's length (corpus.File)
	layout, firstUnits uint32

	// the record table's state after its committed records (records.Saved)
	open               records.Run
	end, lastUnits     uint32
	lastKey            int64
	pendLine, pendConv uint32
	pendTime           int64
	pendSpan           records.Span
	pendMeta           uint32
	lines, endUnits    uint32
}

const (
	savedBinary = 1 << iota
	savedInRecord
	savedHasTail
	savedHasOpen
	savedFielded
	savedHasPend
	savedPendHasSpan
	savedFlags = savedPendHasSpan<<1 - 1
)

// savedRange is a docRange with its segment by place.
type savedRange struct{ seg, lo, hi uint32 }

// savedTailDoc is a tailDoc with its segment by place; its terms follow in
// the tail terms' column.
type savedTailDoc struct {
	seg, doc, terms uint32
	dl              uint32
}

// Saved is what the state blob holds of an index.
type Saved struct {
	Seed     uint64 // the index's text hash seed (internal/corpus/texthash.go), which its segments' keys are hashed with
	NextID   uint32
	Agents   []string
	Episodes []string
	Convs    []string
	Dead     [][]uint64 // by segment, in the index's order
	Files    []*corpus.File
}

// Save is the committed state as the state blob holds it, and each
// segment's place in it. The caller holds the index's read lock: the dead
// bits are copied under it, as Kill writes them under the write lock.
func Save(c *corpus.State) (*Saved, map[*corpus.Segment]uint32) {
	st := &Saved{
		Seed:     c.Seed,
		NextID:   c.NextID,
		Agents:   slices.Clone(c.Agents),
		Episodes: slices.Sorted(maps.Keys(c.Episodes)),
		Dead:     make([][]uint64, len(c.Segments)),
		Files:    slices.Collect(maps.Values(c.Files)),
	}
	place := make(map[*corpus.Segment]uint32, len(c.Segments))
	for i, s := range c.Segments {
		place[s] = uint32(i)
		st.Dead[i] = slices.Clone(s.DeadBits())
	}
	slices.SortFunc(st.Files, func(a, b *corpus.File) int { return cmp.Compare(a.Rel, b.Rel) })
	st.Convs = c.Convs.Names()
	return st, place
}

// EncodeState appends the state blob of st to dst. seg gives each segment
// a file's ranges and tail documents name its place in st's order.
func EncodeState(dst []byte, st *Saved, seg map[*corpus.Segment]uint32) []byte {
	e := bm25.NewSectionEncoder(dst)
	bm25.PutSection(e, []uint64{stateBlobMagic, uint64(st.NextID), uint64(len(st.Dead)), st.Seed})
	putStrings(e, st.Agents)
	putStrings(e, st.Episodes)
	putStrings(e, st.Convs)
	for _, d := range st.Dead {
		bm25.PutSection(e, d)
	}
	var (
		fixed     = make([]savedFile, len(st.Files))
		bytes     []byte
		ranges    []savedRange
		tailDocs  []savedTailDoc
		tailTerms []uint32
		lineIndex []int64
		convs     []uint32
		r         records.Columns // the files' record tables end to end
	)
	for i, fs := range st.Files {
		m, _ := fs.MappedColumns().(*mappedFile)
		lines, t := writeColumns(fs.LineIndex, fs.Table(), m)
		if t == nil {
			t = &noTable
		}
		n, ts := r.Append(t)
		f := &fixed[i]
		*f = savedFile{
			id: fs.ID, agent: fs.Agent, dev: fs.Dev, ino: fs.Ino, size: fs.Size, mtime: fs.Mtime, ctime: fs.Ctime,
			readPos: fs.ReadPos, readAt: fs.ReadAt, commitPos: fs.CommitPos, commitLine: fs.CommitLine,
			head: uint32(fs.Head.Len()), window: uint32(fs.Window.Len()), tail: uint32(len(fs.Tail())), path: uint32(len(fs.Rel)),
			ranges: uint32(len(fs.Ranges)), tailDocs: uint32(len(fs.TailDocs())), lineIndex: uint32(len(lines)),
			recs: n.Recs, over: n.Over, spans: n.Spans, runs: n.Runs, descents: n.Descents, convs: uint32(len(fs.Convs())),
			firstUnits: fs.FirstUnits,
			open:       ts.Open, end: ts.End, lastUnits: ts.LastUnits, lastKey: ts.LastKey,
			pendLine: ts.PendLine, pendConv: ts.PendConv, pendTime: ts.PendTime, pendSpan: ts.PendSpan, pendMeta: ts.PendMeta,
			lines: ts.Lines, endUnits: ts.EndUnits,
		}
		if fs.LayoutSet {
			f.layout = 1 + uint32(fs.Layout)
		}
		for _, fl := range [...]struct {
			bit uint32
			on  bool
		}{
			{savedBinary, fs.Binary}, {savedInRecord, fs.InRecord}, {savedHasTail, fs.Tail() != nil}, {savedHasOpen, ts.HasOpen},
			{savedFielded, ts.Fielded}, {savedHasPend, ts.HasPend}, {savedPendHasSpan, ts.PendHasSpan},
		} {
			if fl.on {
				f.flags |= fl.bit
			}
		}
		bytes = append(append(append(append(bytes, fs.Head.Bytes()...), fs.Window.Bytes()...), fs.Tail()...), fs.Rel...)
		for _, rg := range fs.Ranges {
			ranges = append(ranges, savedRange{seg: seg[rg.Seg], lo: rg.Lo, hi: rg.Hi})
		}
		for _, td := range fs.TailDocs() {
			tailDocs = append(tailDocs, savedTailDoc{seg: seg[td.Seg], doc: td.Doc, terms: uint32(len(td.Terms)), dl: uint32(td.DL)})
			tailTerms = append(tailTerms, td.Terms...)
		}
		f.tailTerms = uint32(len(tailTerms))
		lineIndex = append(lineIndex, lines...)
		convs = append(convs, fs.Convs()...)
	}
	// tailTerms of a file is the running total: its own count is the
	// difference, so that a file without tail documents costs nothing.
	e.Grow(bm25.SectionSize(fixed) + bm25.SectionSize(bytes) + bm25.SectionSize(ranges) + bm25.SectionSize(tailDocs) +
		bm25.SectionSize(tailTerms) + bm25.SectionSize(lineIndex) + bm25.SectionSize(convs) + bm25.SectionSize(r.Line) +
		bm25.SectionSize(r.Sec) + bm25.SectionSize(r.Ms) + bm25.SectionSize(r.Conv) + bm25.SectionSize(r.Meta) +
		bm25.SectionSize(r.Over) + bm25.SectionSize(r.Spans) + bm25.SectionSize(r.Runs) + bm25.SectionSize(r.Descents))
	bm25.PutSection(e, fixed)
	bm25.PutSection(e, bytes)
	bm25.PutSection(e, ranges)
	bm25.PutSection(e, tailDocs)
	bm25.PutSection(e, tailTerms)
	bm25.PutSection(e, lineIndex)
	bm25.PutSection(e, convs)
	bm25.PutSection(e, r.Line)
	bm25.PutSection(e, r.Sec)
	bm25.PutSection(e, r.Ms)
	bm25.PutSection(e, r.Conv)
	bm25.PutSection(e, r.Meta)
	bm25.PutSection(e, r.Over)
	bm25.PutSection(e, r.Spans)
	bm25.PutSection(e, r.Runs)
	bm25.PutSection(e, r.Descents)
	return e.Bytes()
}

// StateBlob is a state blob read back: its sections, not yet made into
// file states (that needs the segments, which need its conversations).
type StateBlob struct {
	Saved
	fixed     []savedFile
	bytes     []byte
	ranges    []savedRange
	tailDocs  []savedTailDoc
	tailTerms []uint32
	lineIndex []int64
	fileConvs []uint32
	recs      records.Columns
	// cols, for a blob decoded from its mapping (decodeState with a
	// backing): the files' line indexes and record tables are left there,
	// unchecked, until their first use (inplace.go).
	cols *mappedColumns
	// summed: the blob's sections read at open, its paths' bytes among
	// them, were checked against the entry's checksums before they were
	// read (decodeState with a blobBacking), so FileStates takes each path
	// as the writer wrote it (see pathWritten). validated counts the paths
	// it checked as if from outside (store.ValidFilePath): those of a blob no
	// checksum covers.
	summed    bool
	validated int
}

// decodeState reads a state blob's sections; its slices point into b.
// With back, b is the state blob's mapping (of snap), checked by range as
// it is read: the headers and the sections read
// now, not the files' line indexes and record tables, which stay in b
// (inplace.go). A range found bad panics with a checkFailure
// (decodeChecked).
func decodeState(b []byte, back bm25.Backing, snap *store.Snapshot) (*StateBlob, error) {
	d := bm25.NewSectionDecoder(b)
	cb := back // nil: nothing to check
	st := &StateBlob{}
	if back != nil {
		d.SetBacking(back)
		st.cols = &mappedColumns{snap: snap, back: back}
		_, st.summed = back.(*blobBacking)
	}
	head := getChecked[uint64](d, cb)
	if d.Err() == nil && (len(head) != 4 || head[0] != stateBlobMagic || head[1] >= 1<<32 || head[2] > uint64(len(b)) || head[3] == 0) {
		d.Fail("no state header")
	}
	st.Agents = getStrings(d, cb)
	st.Episodes = getStrings(d, cb)
	st.Convs = getStrings(d, cb)
	if d.Err() == nil {
		st.NextID, st.Seed = uint32(head[1]), head[3]
		st.Dead = make([][]uint64, head[2])
		for i := range st.Dead {
			st.Dead[i] = getChecked[uint64](d, cb)
		}
	}
	st.fixed = getChecked[savedFile](d, cb)
	st.bytes = getChecked[byte](d, cb)
	st.ranges = getChecked[savedRange](d, cb)
	st.tailDocs = getChecked[savedTailDoc](d, cb)
	st.tailTerms = getChecked[uint32](d, cb)
	st.lineIndex = bm25.GetSection[int64](d) // checked at its first use with a backing
	st.fileConvs = getChecked[uint32](d, cb)
	r := &st.recs
	r.Line = bm25.GetSection[uint32](d)
	r.Sec = bm25.GetSection[uint32](d)
	r.Ms = bm25.GetSection[uint16](d)
	r.Conv = bm25.GetSection[uint32](d)
	r.Meta = bm25.GetSection[uint8](d)
	r.Over = bm25.GetSection[records.TimeOver](d)
	r.Spans = bm25.GetSection[records.Span](d)
	r.Runs = bm25.GetSection[records.Run](d)
	r.Descents = bm25.GetSection[uint32](d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("state blob: %w", err)
	}
	if st.cols != nil {
		st.cols.convs = len(st.Convs)
	}
	return st, nil
}

// getChecked reads d's next section, its values checked through back (nil:
// nothing to check).
func getChecked[T any](d *bm25.SectionDecoder, back bm25.Backing) []T {
	v := bm25.GetSection[T](d)
	bm25.CheckValues(back, v)
	return v
}

// FileRules are what making file states asks of the retriever: an episode
// folder's number (the run folder's naming rule, which persist does not
// know) and a new file memo (the retriever's, held as corpus.File's memo).
type FileRules struct {
	EpisodeNumber func(name string) (string, bool)
	NewMemo       func(recordformat.Form) any // nil for a form that keeps none
}

// FileStates makes the blob's files into file states whose ranges and tail
// documents point at segs, checking every value a lookup indexes with
// against what it names (segments, their pieces, terms, conversations,
// agents, records). A file's absolute path is not stored: it is made from
// the index's root when it is asked for.
func (st *StateBlob) FileStates(segs []*corpus.Segment, terms int, h FileRules) ([]*corpus.File, error) {
	bad := func(f int, format string, a ...any) ([]*corpus.File, error) {
		return nil, fmt.Errorf("state blob: file %d: %s", f, fmt.Sprintf(format, a...))
	}
	if len(st.Dead) != len(segs) {
		return nil, fmt.Errorf("state blob: dead bits of %d segments for %d", len(st.Dead), len(segs))
	}
	r := &st.recs
	if err := r.CheckLengths(); err != nil {
		return nil, fmt.Errorf("state blob: %w", err)
	}
	var c struct{ bytes, ranges, tailDocs, tailTerms, lineIndex, convs int }
	var cr records.Counts
	kept := st.keptColumns()
	out := make([]*corpus.File, len(st.fixed))
	// The states in one allocation: 336 bytes each, not a size class's 352
	// (issue 33: 1.6 MB at 100,000 files). A file an update changes gets
	// a state of its own (corpus.File.Clone, Fresh); its place here stays
	// as long as any other's.
	slab := make([]corpus.File, len(st.fixed))
	// An id is taken once: a bit an id below NextID (restoreIndex makes a
	// pointer of each). A path is too: the writer stores the files sorted
	// by path (Save), so each must follow the one before, which needs no
	// set of them. The paths share one backing (their bytes are read from
	// the blob, not kept from it).
	ids := make([]uint64, (int(st.NextID)+63)/64)
	var paths strings.Builder
	paths.Grow(st.pathBytes())
	for i := range st.fixed {
		f := &st.fixed[i]
		switch {
		case f.id >= st.NextID || ids[f.id/64]&(1<<(f.id%64)) != 0:
			return bad(i, "id %d", f.id)
		case int(f.agent) >= len(st.Agents):
			return bad(i, "agent %d", f.agent)
		case f.flags&^savedFlags != 0:
			return bad(i, "flags %#x", f.flags)
		case f.head > corpus.CheckBytes || f.window > corpus.CheckBytes || f.tail > corpus.MaxTailBytes:
			return bad(i, "check bytes")
		case f.commitPos < 0 || f.commitPos > f.readPos || f.readPos > f.size:
			return bad(i, "offsets")
		case f.flags&savedHasTail != 0 && int64(f.tail) != f.readPos-f.commitPos:
			return bad(i, "pending tail")
		case int(f.pendConv) >= len(st.Convs):
			return bad(i, "pending conversation")
		}
		layout, ok := f.savedLayout()
		if !ok {
			return bad(i, "layout %d", f.layout)
		}
		ids[f.id/64] |= 1 << (f.id % 64)
		file := &slab[i]
		*file = corpus.File{
			ID: f.id, Agent: f.agent, Dev: f.dev, Ino: f.ino, Size: f.size, Mtime: f.mtime, Ctime: f.ctime, ReadPos: f.readPos,
			ReadAt: f.readAt, CommitPos: f.commitPos, CommitLine: f.commitLine,
			Binary: f.flags&savedBinary != 0, InRecord: f.flags&savedInRecord != 0,
			Layout: layout, LayoutSet: f.layout > 0, FirstUnits: f.firstUnits,
		}
		lo, hi, ok := take(&c.bytes, f.head+f.window+f.tail+f.path, len(st.bytes))
		if !ok {
			return bad(i, "bytes")
		}
		b := st.bytes[lo:hi:hi]
		file.Head, b = corpus.CheckOf(b[:f.head]), b[f.head:]
		file.Window, b = corpus.CheckOf(b[:f.window]), b[f.window:]
		if f.flags&savedHasTail != 0 {
			file.SetTail(append([]byte{}, b[:f.tail]...)) // appended to as a carry: its own
		}
		at := paths.Len()
		paths.Write(b[f.tail:])
		rel := paths.String()[at:]
		ep, rest, _ := strings.Cut(rel, "/")
		agent, _, _ := strings.Cut(rest, "/")
		num, isEp := h.EpisodeNumber(ep)
		if !st.pathWritten(rel) || !isEp || agent != st.Agents[f.agent] || !strings.Contains(rest, "/") || i > 0 && rel <= out[i-1].Rel ||
			!file.SetPath(rel, ep, num) {
			return bad(i, "path %q", rel)
		}
		file.Form = recordformat.FormOf(file.Rel)
		file.SetShared(corpus.NewWarnings(file.Form), h.NewMemo(file.Form))

		if lo, hi, ok = take(&c.ranges, f.ranges, len(st.ranges)); !ok {
			return bad(i, "ranges")
		}
		first := len(kept.ranges)
		for _, rg := range st.ranges[lo:hi] {
			if int(rg.seg) >= len(segs) || rg.lo > rg.hi || int(rg.hi) > segs[rg.seg].Docs() {
				return bad(i, "range %v", rg)
			}
			kept.ranges = append(kept.ranges, corpus.Range{Seg: segs[rg.seg], Lo: rg.lo, Hi: rg.hi})
		}
		if len(kept.ranges) > first {
			file.Ranges = clip(kept.ranges[first:])
		}
		if lo, hi, ok = take(&c.tailDocs, f.tailDocs, len(st.tailDocs)); !ok {
			return bad(i, "tail documents")
		}
		for _, td := range st.tailDocs[lo:hi] {
			if int(td.seg) >= len(segs) || int(td.doc) >= segs[td.seg].Docs() || td.dl > 1<<16-1 {
				return bad(i, "tail document %v", td)
			}
			tlo, thi, ok := take(&c.tailTerms, td.terms, len(st.tailTerms))
			if !ok {
				return bad(i, "tail terms")
			}
			tt := clip(st.tailTerms[tlo:thi])
			for _, t := range tt {
				if int(t) >= terms {
					return bad(i, "tail term %d of %d", t, terms)
				}
			}
			file.SetTailDocs(append(file.TailDocs(), corpus.TailDoc{Seg: segs[td.seg], Doc: td.doc, Terms: tt, DL: uint16(td.dl)}))
		}
		if c.tailTerms != int(f.tailTerms) {
			return bad(i, "tail terms' total")
		}
		if lo, hi, ok = take(&c.lineIndex, f.lineIndex, len(st.lineIndex)); !ok {
			return bad(i, "line index")
		}
		lines := clip(st.lineIndex[lo:hi])
		if lo, hi, ok = take(&c.convs, f.convs, len(st.fileConvs)); !ok {
			return bad(i, "conversations")
		}
		file.SetConvs(clip(st.fileConvs[lo:hi]))
		if id, over := firstOver(file.Convs(), len(st.Convs)); over {
			return bad(i, "conversation %d", id)
		}
		if err := st.recordTable(f, file, &cr); err != nil {
			return bad(i, "%v", err)
		}
		switch {
		case st.cols == nil:
			file.LineIndex = lines
		case file.Table() == nil && len(lines) <= heapLines:
			if len(lines) > 0 { // checked now, kept on the heap
				bm25.CheckValues(st.cols.back, lines)
				first := len(kept.lines)
				kept.lines = append(kept.lines, lines...)
				file.LineIndex = clip(kept.lines[first:])
			}
		default:
			file.SetMapped(&mappedFile{cols: st.cols, lines: lines, recs: file.Table()})
		}
		out[i] = file
	}
	switch {
	case c.bytes != len(st.bytes), c.ranges != len(st.ranges), c.tailDocs != len(st.tailDocs), c.tailTerms != len(st.tailTerms),
		c.lineIndex != len(st.lineIndex), c.convs != len(st.fileConvs), !r.Whole(cr):
		return nil, fmt.Errorf("state blob: columns longer than their files")
	}
	return out, nil
}

// pathWritten reports whether rel is a path as the writer writes one. The
// writer's are the walk's, each checked as the entry's file table is
// written in the same commit (store.EncodeFileTable: store.ValidFilePath); a blob
// whose path bytes were checked against the entry's checksums before they
// were read (summed) holds them as written, and checking each again as if
// from outside (its UTF-8 and its parts, 48M instructions at 100,000
// files, 8% of a command's reopen: issue 33) found nothing a checksum had
// not. A blob no checksum covers (DecodeState, DecodeStateInPlace) has
// each checked. Either way FileStates then checks what the file state
// needs of the path: strictly after the one before, of an episode folder
// and of the file's agent, in a folder of the agent's.
func (st *StateBlob) pathWritten(rel string) bool {
	if st.summed {
		return true
	}
	st.validated++
	return store.ValidFilePath(rel)
}

// pathBytes is the length of the files' paths together, at most the
// blob's bytes (a blob that says more is refused as its files are made).
func (st *StateBlob) pathBytes() int {
	n := 0
	for i := range st.fixed {
		n += int(st.fixed[i].path)
	}
	return min(n, len(st.bytes))
}

// keptColumns are the columns a blob's file states keep, in memory of
// their own (the package comment says why), and the arena their ranges are
// appended to.
type keptColumns struct {
	ranges []corpus.Range
	lines  []int64 // with the line indexes in the mapping: the short ones (heapLines)
}

// heapLines is the longest line index of a note that a blob decoded from its
// mapping copies onto the heap at once rather than leave in the mapping
// (inplace.go): at 100,000 files most notes have one or two entries, which
// cost less than what leaving them takes (a mappedFile, 48 bytes).
const heapLines = 8

// keptColumns gives st's kept columns memory of their own and returns the
// arenas, sized for a blob whose values are all in bounds (one that is not
// is refused before it outgrows them; an arena that grows would still be
// right).
func (st *StateBlob) keptColumns() *keptColumns {
	st.tailTerms = keep(st.tailTerms)
	st.fileConvs = keep(st.fileConvs)
	kept := &keptColumns{ranges: make([]corpus.Range, 0, len(st.ranges))}
	if st.cols != nil { // left in the mapping (inplace.go) but the short line indexes
		n := 0
		for i := range st.fixed {
			if f := &st.fixed[i]; f.recs == 0 && f.lineIndex <= heapLines {
				n += int(f.lineIndex)
			}
		}
		kept.lines = make([]int64, 0, min(n, len(st.lineIndex)))
	} else {
		st.lineIndex = keep(st.lineIndex)
		r := &st.recs
		st.recs = records.Columns{Line: keep(r.Line), Sec: keep(r.Sec), Ms: keep(r.Ms), Conv: keep(r.Conv), Meta: keep(r.Meta),
			Over: keep(r.Over), Spans: keep(r.Spans), Runs: keep(r.Runs), Descents: keep(r.Descents)}
	}
	return kept
}

// recordTable cuts file f's record table from the blob's columns, at *at;
// a note's must be empty, and is left nil.
func (st *StateBlob) recordTable(f *savedFile, fs *corpus.File, at *records.Counts) error {
	n := records.Counts{Recs: f.recs, Over: f.over, Spans: f.spans, Runs: f.runs, Descents: f.descents}
	saved := records.Saved{Open: f.open, HasOpen: f.flags&savedHasOpen != 0, Fielded: f.flags&savedFielded != 0,
		End: f.end, LastUnits: f.lastUnits, LastKey: f.lastKey, HasPend: f.flags&savedHasPend != 0,
		PendLine: f.pendLine, PendConv: f.pendConv, PendTime: f.pendTime, PendSpan: f.pendSpan,
		PendHasSpan: f.flags&savedPendHasSpan != 0, PendMeta: f.pendMeta, Lines: f.lines, EndUnits: f.endUnits}
	if !fs.Form.IsRecord() {
		return noteTable(n, saved)
	}
	var t records.Table
	var err error
	if st.cols != nil {
		err = st.recs.CutUnchecked(&t, at, n, saved) // its values are checked at its first use (inplace.go)
	} else {
		err = st.recs.Cut(&t, at, n, saved, len(st.Convs))
	}
	if err != nil {
		return err
	}
	kept := new(records.Table)
	*kept = t
	fs.SetTable(kept)
	return nil
}

// savedLayout is the record file's layout f keeps (Own while it is not
// decided yet); ok is false for a value no layout has.
func (f *savedFile) savedLayout() (recordformat.Layout, bool) {
	switch {
	case f.layout == 0:
		return recordformat.Own, true
	case f.layout > 0xff:
		return recordformat.Own, false
	}
	return recordformat.LayoutOf(uint8(f.layout - 1))
}

// noteTable checks a note's record counts and table state: a note keeps
// no table, and its must be a table with nothing, one that records.Cut
// makes Empty. Checked without making it: cutting the nine columns of
// the 98,000 notes of a 100,000-file reopen to find them empty was 40M
// instructions, 8% of the command's (issue 33; TestNoteTable holds it
// against Cut and Empty).
func noteTable(n records.Counts, saved records.Saved) error {
	if n != (records.Counts{}) || saved != (records.Saved{}) {
		return fmt.Errorf("records of a note")
	}
	return nil
}

// firstOver returns the first id of ids not below n, if any.
func firstOver(ids []uint32, n int) (uint32, bool) {
	for _, id := range ids {
		if int(id) >= n {
			return id, true
		}
	}
	return 0, false
}

// take cuts the next n values of a column of total values, at *at: a
// file's share of the files' columns laid end to end.
func take(at *int, n uint32, total int) (lo, hi int, ok bool) {
	lo, hi = *at, *at+int(n)
	*at = hi
	return lo, hi, hi <= total
}

// clip gives s with no room to append into: a slice into a mapping.
func clip[T any](s []T) []T { return s[:len(s):len(s)] }

// putStrings writes strings as their ends and their bytes.
func putStrings(e *bm25.SectionEncoder, ss []string) {
	ends := make([]uint32, len(ss))
	var b []byte
	for i, s := range ss {
		b = append(b, s...)
		ends[i] = uint32(len(b))
	}
	bm25.PutSection(e, ends)
	bm25.PutSection(e, b)
}

func getStrings(d *bm25.SectionDecoder, back bm25.Backing) []string {
	ends := getChecked[uint32](d, back)
	b := getChecked[byte](d, back)
	if d.Err() != nil {
		return nil
	}
	out := make([]string, len(ends))
	prev := uint32(0)
	for i, end := range ends {
		if end < prev || int(end) > len(b) {
			d.Fail("string %d", i)
			return nil
		}
		out[i] = string(b[prev:end])
		prev = end
	}
	if int(prev) != len(b) {
		d.Fail("bytes after the strings")
		return nil
	}
	return out
}

// noTable is the record table a note is encoded with: never written.
var noTable records.Table
