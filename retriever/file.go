package retriever

import (
	"slices"
	"sync/atomic"

	"runls/recordformat"
	"runls/retriever/internal/records"
	"runls/retriever/internal/runfs"
)

// fileState is what the index knows of one agent file. A committed fileState
// is read by searches under the index's read lock and never written: an
// update works on a copy (next) and the commit swaps it in. Slices that only
// grow (lineIndex, ranges) may share their backing arrays between versions,
// since a reader never looks past its own length. The one exception is
// compact, which points ranges and tailDocs at a merged segment under the
// write lock, with new slices, when no update is under way.
type fileState struct {
	id      uint32
	rel     string // slash-separated path relative to the run folder
	episode string // the episode folder's name
	epNum   string // its number without leading zeros
	agent   uint32
	form    recordformat.Form
	// layout is a record file's layout (spec §2 "Other layouts"), decided
	// from its head when layoutSet and kept for the file's whole life: a
	// file that changes layout mid-way keeps the one it started with. A
	// file read again from its start (fresh) decides it again.
	layout    recordformat.Layout
	layoutSet bool
	// firstUnits is the UTF-16 length of a foreign log's first line, the
	// range of its one diagnostic.
	firstUnits uint32

	// identity and content checks at the last read
	dev, ino uint64
	size     int64
	mtime    int64
	ctime    int64 // the inode's change time: a rewrite that set mtime back moves it
	readPos  int64
	// checkedAt is when the file was last stat'd and read or checked (unix
	// ns); read and written only by updates, which refreshMu orders.
	checkedAt int64
	// readAt is when the content was last read (unix ns): unlike checkedAt
	// it is set before the commit and never after, so the cache's writer
	// reads it beside updates (reopen.go).
	readAt int64
	head   []byte // the first bytes read, to tell a rewrite
	window []byte // the bytes just before readPos, likewise
	binary bool

	// the pending tail: bytes [commitPos, readPos) are ingested again when
	// more arrives; tail holds them when they are few (else they are re-read)
	commitPos  int64
	commitLine uint32
	inRecord   bool
	tail       []byte
	tailDocs   []tailDoc

	ranges    []docRange
	lineIndex []int64 // start offset of every lineIndexEvery-th line

	// recs is a record file's records (internal/records); nil for a note, which
	// has none (most files are notes: an empty table is nine slices), and
	// read through records.
	recs  *records.Table
	convs []uint32 // conversation ids written in the file, sorted

	warned *fileWarnings // shared by all versions of the file
	// memo holds what was found by reading the file's records back
	// (failures.go, stacktraces.go), shared by the versions of one reading
	// of the file: a new one when it is read again from its start; nil:
	// nothing kept.
	memo *fileMemo
}

// fileWarnings makes each WARN about a file happen once.
type fileWarnings struct {
	unfielded atomic.Bool
}

type tailDoc struct {
	seg   *segment
	doc   uint32
	terms []uint32
	dl    uint16
}

type docRange struct {
	seg    *segment
	lo, hi uint32
}

const (
	checkBytes   = 32       // head and window kept to tell a rewrite
	maxTailBytes = 64 << 10 // a longer pending tail is re-read, not kept
)

// clone starts the next version of a file for an update that appends.
func (fs *fileState) clone() *fileState {
	n := *fs
	if fs.recs != nil {
		t := fs.recs.AfterCommit()
		n.recs = &t
	}
	n.tailDocs = nil
	n.tail = nil
	return &n
}

// known is what following's recheck compares an opened file with.
func (fs *fileState) known() runfs.Known {
	return runfs.Known{Dev: fs.dev, Ino: fs.ino, Size: fs.size, ReadPos: fs.readPos, Mtime: fs.mtime}
}

// fresh starts a version of a file read from its start.
func (fs *fileState) fresh() *fileState {
	return &fileState{
		id: fs.id, rel: fs.rel, episode: fs.episode, epNum: fs.epNum,
		agent: fs.agent, form: fs.form, warned: fs.warned, recs: newRecords(fs.form),
		memo: &fileMemo{},
	}
}

// conversational reports whether the file's records carry the
// conversation field and follow §5's rules 2-4: a record file in the run's
// own layout. A foreign log's records are read as notes (spec §2), with
// their times.
func (fs *fileState) conversational() bool { return fs.form.IsRecord() && !fs.layout.Foreign() }

// records returns the file's record table: an empty one for a note.
func (fs *fileState) records() *records.Table {
	if fs.recs == nil {
		return &noRecords
	}
	return fs.recs
}

// noRecords is the record table of every note: never written (a record
// file has a table of its own, newRecords).
var noRecords records.Table

// newRecords returns the empty table a file of form f starts with: nil for
// a note.
func newRecords(f recordformat.Form) *records.Table {
	if !f.IsRecord() {
		return nil
	}
	return &records.Table{}
}

func (fs *fileState) addConv(id uint32) {
	if i, found := slices.BinarySearch(fs.convs, id); !found {
		fs.convs = slices.Insert(slices.Clip(fs.convs), i, id)
	}
}

// indexed reports whether the file counts as indexed (spec §9 run/info).
func (fs *fileState) indexed() bool { return !fs.binary }
