package corpus

import (
	"slices"
	"sync/atomic"

	"runls/recordformat"
	"runls/retriever/internal/records"
)

// File is what the index knows of one agent file. A committed File
// is read by searches under the index's read lock and never written: an
// update works on a copy (Update.Next) and the commit swaps it in. Slices that only
// grow (LineIndex, Ranges) may share their backing arrays between versions,
// since a reader never looks past its own length. The one exception is
// Compact, which points Ranges and TailDocs at a merged segment under the
// write lock, with new slices, when no update is under way.
//
// Its fields are laid out without padding between them, and what few files
// have (a pending tail) is behind a pointer: at 100,000 files each byte of
// it is 100 KB of the heap.
type File struct {
	ID    uint32
	Agent uint32
	// FirstUnits is the UTF-16 length of a foreign log's first line, the
	// range of its one diagnostic.
	FirstUnits uint32
	// What a query's filter and tie order read of every file they meet
	// when the files' keys are off (filekeys.go), and the piece rules of a
	// window (Agent, Form, Layout, epEnd, Rel), is in the first 32 bytes
	// (TestFileHotFieldsFirst): one cache line, met cold, whether the File
	// is alone in its 256-byte size class or one of a restored slab's
	// (issue 33: the flags were two lines further, after the checks).
	Form recordformat.Form
	// Layout is a record file's layout (spec §2 "Other layouts"), decided
	// from its head when LayoutSet and kept for the file's whole life: a
	// file that changes layout after its first lines keeps the one it
	// started with. A file read again from its start (Fresh) decides it
	// again, as one is whose first lines are still coming and decide
	// another (the retriever's layoutChanged).
	Layout   recordformat.Layout
	epEnd    uint8 // Rel[:epEnd] is the episode folder's name (SetPath)
	InRecord bool  // a record started before CommitPos
	// Rel is the slash-separated path relative to the run folder: its first
	// part is the episode folder's name (Episode), whose last digits are
	// its number (EpNum). As strings of their own they were 32 bytes a
	// file, 3.2 MB at 100,000 files (issue 33).
	Rel string

	// identity and content checks at the last read
	Dev, Ino uint64
	Size     int64
	Mtime    int64
	Ctime    int64 // the inode's change time: a rewrite that set mtime back moves it
	ReadPos  int64
	// CheckedAt is when the file was last stat'd and read or checked (unix
	// ns); read and written only by updates, which the retriever's refreshMu orders.
	CheckedAt int64
	// ReadAt is when the content was last read, or checked the same out of
	// its racy window (State.Confirm, a version of its own), in unix ns:
	// unlike CheckedAt it is set before the commit and never after, so the
	// cache's writer reads it beside updates (the retriever's reopen.go).
	ReadAt int64
	// CommitPos starts the pending tail: bytes [CommitPos, ReadPos) are
	// ingested again when more arrives (Tail, TailDocs).
	CommitPos int64
	Head      Check // the first bytes read, to tell a rewrite
	Window    Check // the bytes just before readPos, likewise

	LayoutSet  bool
	Binary     bool   // left out whole (spec §1): its check is its head
	CommitLine uint32 // the line CommitPos starts

	pending *pending // nil: no pending tail kept, and no tail documents

	Ranges []Range
	// LineIndex is the start offset of every lineIndexEvery-th line, read
	// through Lines.
	LineIndex []int64

	// cols is this version's record table, columns in the mapping and
	// conversation ids; nil when it has none of them (a note: at 100,000
	// files most are notes, and the three in each were 4 MB of the heap,
	// issue 33).
	cols *fileCols

	// shared is what a record file's versions share (SetShared); nil for a
	// note, which has none of it: at 100,000 files most files are notes,
	// and its two fields in each were 2.4 MB of the heap (issue 33).
	shared *shared
}

// shared is what versions of a record file share: its warnings, the same
// for all its versions, and its memo, for those of one reading of it.
type shared struct {
	warned *Warnings
	memo   any
}

// SetShared sets the file's warnings, shared by all versions of a record
// file (NewWarnings), and its memo: what was found by reading the file's
// records back (the retriever's failures.go, stacktraces.go: its fileMemo,
// which this package does not know), shared by the versions of one reading
// of the file, a new one when it is read again from its start. Both nil:
// none (a note, which is never warned about and has no records).
func (fs *File) SetShared(w *Warnings, memo any) {
	if w == nil && memo == nil {
		fs.shared = nil
		return
	}
	fs.shared = &shared{warned: w, memo: memo}
}

// Warned is the file's warnings (SetShared), nil for a note.
func (fs *File) Warned() *Warnings {
	if fs.shared == nil {
		return nil
	}
	return fs.shared.warned
}

// Memo is the file's memo (SetShared), nil for a note.
func (fs *File) Memo() any {
	if fs.shared == nil {
		return nil
	}
	return fs.shared.memo
}

// SetPath sets the file's path, rel, of the episode folder ep (rel's first
// part) whose number without leading zeros is num (ep's last digits:
// runfs.EpisodeNumber). When the parts are not so (the caller's rules made
// them of rel), or ep is longer than a folder's name can be (255 bytes),
// rel is kept with no episode (Episode and EpNum ""), and false returned.
func (fs *File) SetPath(rel, ep, num string) bool {
	fs.Rel, fs.epEnd = rel, 0
	if len(ep) > 0xff || len(rel) <= len(ep) || rel[:len(ep)] != ep || rel[len(ep)] != '/' || episodeNumber(ep) != num {
		return false
	}
	fs.epEnd = uint8(len(ep))
	return true
}

// Episode is the episode folder's name.
func (fs *File) Episode() string { return fs.Rel[:fs.epEnd] }

// EpNum is the episode's number without leading zeros.
func (fs *File) EpNum() string { return episodeNumber(fs.Episode()) }

// episodeNumber is an episode folder's number without leading zeros: its
// last digits ("0" for zeros only), of a name the run folder's naming rule
// (runfs.EpisodeNumber) took for an episode's.
func episodeNumber(ep string) string {
	i := len(ep)
	for i > 0 && ep[i-1] >= '0' && ep[i-1] <= '9' {
		i--
	}
	for i < len(ep)-1 && ep[i] == '0' {
		i++
	}
	return ep[i:]
}

// fileCols is what a version of a file has of records and of the cache
// entry's mapping, which most notes have none of.
type fileCols struct {
	// recs is a record file's records (internal/records); nil for a note,
	// which has none (an empty table is nine slices), and read through
	// Records.
	recs *records.Table
	// mapped, when set, holds the line index and the record table instead
	// of LineIndex and recs (nil then): a restored file's, still in the
	// cache entry's mapping (Mapped).
	mapped Mapped
	convs  []uint32 // conversation ids written in the file, sorted
}

// colsToSet is fs's fileCols, made when it has none.
func (fs *File) colsToSet() *fileCols {
	if fs.cols == nil {
		fs.cols = &fileCols{}
	}
	return fs.cols
}

// Table is the file's own record table as an update writes it: nil for a
// note and for a restored file whose columns are still in the mapping
// (read those through Records).
func (fs *File) Table() *records.Table {
	if fs.cols == nil {
		return nil
	}
	return fs.cols.recs
}

// SetTable gives the file its record table (nil: none, a note's).
func (fs *File) SetTable(t *records.Table) {
	if t == nil && fs.cols == nil {
		return
	}
	fs.colsToSet().recs = t
}

// Convs are the conversation ids written in the file, sorted; the caller
// does not write them.
func (fs *File) Convs() []uint32 {
	if fs.cols == nil {
		return nil
	}
	return fs.cols.convs
}

// SetConvs sets the conversation ids written in the file, sorted.
func (fs *File) SetConvs(ids []uint32) {
	if len(ids) == 0 && fs.cols == nil {
		return
	}
	fs.colsToSet().convs = ids
}

// pending is a file's pending tail: its bytes when they are few, and the
// documents made of it, whose terms are kept to retract them from the
// statistics. One version of a file owns it (Clone starts without).
type pending struct {
	tail []byte
	docs []TailDoc
}

// Tail returns the pending tail's bytes [CommitPos, ReadPos) when they were
// kept (few: else they are read again); nil when not.
func (fs *File) Tail() []byte {
	if fs.pending == nil {
		return nil
	}
	return fs.pending.tail
}

// SetTail keeps b as the pending tail's bytes (nil: none kept).
func (fs *File) SetTail(b []byte) {
	if fs.pending == nil {
		if b == nil {
			return
		}
		fs.pending = &pending{}
	}
	fs.pending.tail = b
}

// TailDocs returns the documents made of the pending tail.
func (fs *File) TailDocs() []TailDoc {
	if fs.pending == nil {
		return nil
	}
	return fs.pending.docs
}

// SetTailDocs sets the documents made of the pending tail.
func (fs *File) SetTailDocs(docs []TailDoc) {
	if fs.pending == nil {
		if len(docs) == 0 {
			return
		}
		fs.pending = &pending{}
	}
	fs.pending.docs = docs
}

// Warnings makes each WARN about a file happen once.
type Warnings struct {
	Unfielded atomic.Bool
}

// NewWarnings returns the warnings a file of form f keeps: nil for a note,
// which no WARN names (they are about record files' lines).
func NewWarnings(f recordformat.Form) *Warnings {
	if !f.IsRecord() {
		return nil
	}
	return &Warnings{}
}

type TailDoc struct {
	Seg   *Segment
	Doc   uint32
	Terms []uint32
	DL    uint16
}

type Range struct {
	Seg    *Segment
	Lo, Hi uint32
}

// Check is at most CheckBytes bytes of a file kept to tell a rewrite (its
// head, or the bytes before its read position), held in the File itself:
// as slices of their own, a file's two took 48 bytes of headers and a
// 64-byte allocation, 11 MB at 100,000 files.
type Check struct {
	n uint8
	b [CheckBytes]byte
}

// CheckOf returns the first CheckBytes bytes of p (all of a shorter p) as a
// Check.
func CheckOf(p []byte) Check {
	var c Check
	c.n = uint8(copy(c.b[:], p))
	return c
}

// Bytes returns the bytes kept; the caller does not write them.
func (c *Check) Bytes() []byte { return c.b[:c.n:c.n] }

// Len is how many bytes are kept.
func (c *Check) Len() int { return int(c.n) }

const (
	CheckBytes   = 32       // head and window kept to tell a rewrite
	MaxTailBytes = 64 << 10 // a longer pending tail is re-read, not kept
)

// Mapped is a restored file's line index and record table while they are
// in the cache entry's mapping, not yet checked (the persist package's): at
// 1 GB the files' columns are some 90 MB, which a reopen then neither
// checks nor copies before its first answer, and which a request reads
// only for the files it asks about. Own makes them the heap's at their
// first use.
type Mapped interface {
	// Own returns the line index and the record table (nil for a note) in
	// memory of their own, checked, the same each call. Bytes found bad
	// (or a fault reading them) give empty ones, and are the cache entry's
	// corruption, which the guard of the request that read them finds
	// (persist.Guard): such an answer is never given.
	Own() ([]int64, *records.Table)
	// Borrow returns them as Own does but, when they are not the heap's
	// yet, in memory for the caller alone, not kept: for a view that reads
	// a file once.
	Borrow() ([]int64, *records.Table)
	// InPlace returns them as they are mapped, for their lengths only
	// (their bytes are not checked).
	InPlace() ([]int64, *records.Table)
}

// SetMapped gives a restored file its line index and record table in the
// mapping; LineIndex and Table are then nil.
func (fs *File) SetMapped(m Mapped) {
	c := fs.colsToSet()
	c.mapped, c.recs, fs.LineIndex = m, nil, nil
}

// MappedColumns returns what SetMapped gave, or nil.
func (fs *File) MappedColumns() Mapped {
	if fs.cols == nil {
		return nil
	}
	return fs.cols.mapped
}

// Lines returns the line index: the start offset of every
// lineIndexEvery-th line.
func (fs *File) Lines() []int64 {
	if m := fs.MappedColumns(); m != nil {
		l, _ := m.Own()
		return l
	}
	return fs.LineIndex
}

// ColumnSizes are the line index's length and the record table's, without
// reading either (a mapped file's columns stay unread).
func (fs *File) ColumnSizes() (lines []int64, recs *records.Table) {
	if m := fs.MappedColumns(); m != nil {
		lines, recs = m.InPlace()
	} else {
		lines, recs = fs.LineIndex, fs.Table()
	}
	if recs == nil {
		recs = &noRecords
	}
	return lines, recs
}

// Clone starts the next version of a file for an update that appends.
func (fs *File) Clone() *File {
	n := *fs
	if fs.cols != nil {
		c := *fs.cols // the next version's own
		if c.mapped != nil {
			n.LineIndex, c.recs = c.mapped.Own()
			c.mapped = nil
		}
		if c.recs != nil {
			t := c.recs.AfterCommit()
			c.recs = &t
		}
		n.cols = &c
	}
	n.pending = nil
	return &n
}

// Fresh starts a version of a file read from its start.
func (fs *File) Fresh(memo any) *File {
	n := &File{
		ID: fs.ID, Rel: fs.Rel, epEnd: fs.epEnd,
		Agent: fs.Agent, Form: fs.Form,
	}
	n.SetTable(NewRecords(fs.Form))
	n.SetShared(fs.Warned(), memo)
	return n
}

// Conversational reports whether the file's records carry the
// conversation field and follow §5's rules 2-4: a record file in the run's
// own layout. A foreign log's records are read as notes (spec §2), with
// their times.
func (fs *File) Conversational() bool { return fs.Form.IsRecord() && !fs.Layout.Foreign() }

// Records returns the file's record table: an empty one for a note.
func (fs *File) Records() *records.Table {
	if m := fs.MappedColumns(); m != nil {
		_, t := m.Own()
		if t != nil {
			return t
		}
	}
	if t := fs.Table(); t != nil {
		return t
	}
	return &noRecords
}

// ColumnsOnce returns the file's line index and record table, as Lines and
// Records do, for a view that reads them once and keeps nothing of them: a
// restored file's still in the mapping are checked and copied for this
// call alone, not made the file's own. A server publishes every record
// file's diagnostics after a reopen; the columns of the files warned
// about, kept, were 9.5 MB of the heap at 100,000 files (issue 33).
func (fs *File) ColumnsOnce() ([]int64, *records.Table) {
	if m := fs.MappedColumns(); m != nil {
		if l, t := m.Borrow(); t != nil {
			return l, t
		}
	}
	return fs.Lines(), fs.Records()
}

// noRecords is the record table of every note: never written (a record
// file has a table of its own, NewRecords).
var noRecords records.Table

// NewRecords returns the empty table a file of form f starts with: nil for
// a note.
func NewRecords(f recordformat.Form) *records.Table {
	if !f.IsRecord() {
		return nil
	}
	return &records.Table{}
}

// AddConv adds a conversation id written in the file.
func (fs *File) AddConv(id uint32) {
	convs := fs.Convs()
	if i, found := slices.BinarySearch(convs, id); !found {
		fs.SetConvs(slices.Insert(slices.Clip(convs), i, id))
	}
}

// Indexed reports whether the file counts as indexed (spec §9 run/info).
func (fs *File) Indexed() bool { return !fs.Binary }
