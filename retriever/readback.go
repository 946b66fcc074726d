package retriever

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"runls/masking"
	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

// Reading indexed text back from a run's files: the index keeps no text, so
// a result's line, a page of records, an outline's records and a hover's
// record are read back through the file's sparse line index (ingest.go),
// the lines of a record checked against its table before they are given (a
// file rewritten since its update answers ErrChanged, and the next update
// reads it again). Every read-back of lines goes through readLines, one
// read a stretch; a result's line, which may be long and is wanted only up
// to its piece, through readLine; a client's lines (ReadLines, read.go),
// which go to the file's end as it is now and are capped line by line,
// through readFrom. All three start at the line index's entry before the
// first line wanted.

// readBack reads indexed text back from the run's files and masks it: the
// one line reader (readLines, and readLine for a result's long line) and
// the one masking (mask.go) that every read-back goes through.
type readBack struct {
	root    string // the run folder's real path
	fsys    *os.Root
	handles *runfs.Handles
	masker  masking.Masker // nil: masking is off
	convs   *corpus.Convs  // the names of conversation ids
	names   fileNames      // the paths and URIs of the files items were in
	// plainReads makes readLine read with pread, not through the file's
	// mapping: the plain path its tests check the mapping against.
	plainReads bool

	// scratch holds *lineScratch for the read-backs that keep nothing of
	// what they read (readTrace, a search's items' lines): a server publishes every record file's
	// diagnostics after an index is ready, and reading each stack trace
	// into a buffer of its own was 108 MB of garbage on a reopen of
	// 100,000 files (issue 33).
	scratch sync.Pool
}

// lineScratch is a read-back's buffer and its lines, reused.
type lineScratch struct {
	buf   []byte
	lines [][]byte
}

// maxScratch bounds the buffer a lineScratch keeps for the next read-back.
const maxScratch = 1 << 20

// readLines reads lines [from, to) of a file, without their line ends, in
// one read: from the line index's entry at or before from to the entry
// after to-1 (or the end of what was read of the file). A file that ends
// before line to-1 has changed since it was read.
func (rb *readBack) readLines(ctx context.Context, fs *corpus.File, from, to uint32) ([][]byte, error) {
	return rb.readLinesInto(ctx, fs, fs.Lines(), from, to, &lineScratch{})
}

// withScratch calls read with a reused lineScratch, whose lines are valid
// only until read returns.
func (rb *readBack) withScratch(read func(*lineScratch)) {
	sc, _ := rb.scratch.Get().(*lineScratch)
	if sc == nil {
		sc = &lineScratch{}
	}
	read(sc)
	if cap(sc.buf) <= maxScratch {
		clear(sc.lines[:cap(sc.lines)]) // no line keeps a freed buffer's bytes
		rb.scratch.Put(sc)
	}
}

// readLinesInto is readLines into sc's buffer and lines, grown as needed,
// with index as fs's line index (fs.Lines(), or one borrowed).
func (rb *readBack) readLinesInto(ctx context.Context, fs *corpus.File, index []int64, from, to uint32, sc *lineScratch) ([][]byte, error) {
	k := int(from / lineIndexEvery)
	if k >= len(index) || to <= from {
		return nil, ErrChanged
	}
	start, end := index[k], fs.ReadPos
	if e := int((to-1)/lineIndexEvery) + 1; e < len(index) {
		end = index[e]
	}
	if end < start {
		return nil, ErrChanged
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := rb.handles.Acquire(rb.fsys, fs.Rel, fs.Dev, fs.Ino)
	if err != nil {
		return nil, err
	}
	defer rb.handles.Release(h)
	if int64(cap(sc.buf)) < end-start {
		sc.buf = make([]byte, end-start)
	}
	buf := sc.buf[:end-start]
	if n, err := h.F.ReadAt(buf, start); n < len(buf) {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", fs.Rel, err)
		}
		return nil, ErrChanged // it shrank
	}
	skip := int(from % lineIndexEvery)
	want := int(to - from)
	if cap(sc.lines) < want {
		sc.lines = make([][]byte, 0, want)
	}
	lines := sc.lines[:0]
	for p := 0; len(lines) < want && p < len(buf); {
		nl := bytes.IndexByte(buf[p:], '\n')
		line := buf[p:]
		if nl >= 0 {
			line = buf[p : p+nl]
			p += nl + 1
		} else {
			p = len(buf) // the file's last line, without a line end: a "\r" with no "\n" after it is text
		}
		if skip > 0 {
			skip--
			continue
		}
		if nl >= 0 {
			line = bytes.TrimSuffix(line, []byte{'\r'})
		}
		lines = append(lines, line)
	}
	sc.lines = lines
	if len(lines) < want {
		return nil, ErrChanged
	}
	return lines, nil
}

// readLine reads want bytes from the start of line n of a file (fewer at
// the file's end; when toLineEnd, up to the line's "\n", included, where
// that comes first), using the file's sparse line index, into *buf (grown
// as needed and kept there for the next read: a search's items read one
// line each into one buffer, where two fresh ones a line were most of a
// cheap search's garbage, issue 33). The line returned is in *buf. It
// finds the line in the file's mapping and copies only its bytes
// (Handle.LineMapped), where a copy of its block (16 lines) was a cold
// cheap search's largest source of misses in memmove and a JSON line's
// prose piece (readWholeLine) copied 64 KiB; where the mapping cannot
// answer, it reads the block (Handle.ReadMapped, or a pread when
// plainReads). Either reads what a pread would; what it returns of a file
// changed since its update is checked by its caller (the item's text
// against its key, a masked one's length).
func (rb *readBack) readLine(fs *corpus.File, n uint32, want int, toLineEnd bool, buf *[]byte) ([]byte, error) {
	k := int(n / lineIndexEvery)
	index := fs.Lines()
	if k >= len(index) {
		return nil, io.ErrUnexpectedEOF
	}
	h, err := rb.handles.Acquire(rb.fsys, fs.Rel, fs.Dev, fs.Ino)
	if err != nil {
		return nil, err
	}
	defer rb.handles.Release(h)
	off := index[k]
	skip := int(n % lineIndexEvery)
	if !rb.plainReads {
		b := slices.Grow((*buf)[:0], want)[:want]
		*buf = b[:0] // kept for the read below when the mapping cannot answer
		if m, ok := h.LineMapped(b, off, skip, toLineEnd); ok {
			return b[:m], nil
		}
	}
	b := (*buf)[:0]
	defer func() { *buf = b[:0] }()
	size := 4 << 10
	if k+1 < len(index) {
		// Line n ends before the next kept offset: one read takes it, where
		// 4 KiB at a time took two or three for a line deep in its block.
		size = int(min(max(index[k+1]-off, 1), 1<<20))
	}
	start := 0 // where line n starts in b, once found
	for {
		b = slices.Grow(b, size)
		var m int
		var err error
		if rb.plainReads {
			m, err = h.F.ReadAt(b[len(b):len(b)+size], off+int64(len(b)))
		} else {
			m, err = h.ReadMapped(b[len(b):len(b)+size], off+int64(len(b)))
		}
		b = b[:len(b)+m]
		for skip > 0 {
			i := bytes.IndexByte(b[start:], '\n')
			if i < 0 {
				break
			}
			start += i + 1
			skip--
		}
		if skip == 0 && len(b)-start >= want {
			return toEnd(b[start:start+want], toLineEnd), nil
		}
		if err != nil || m == 0 {
			if skip == 0 {
				return toEnd(b[start:], toLineEnd), nil
			}
			return nil, io.ErrUnexpectedEOF
		}
		if size < 1<<20 {
			size *= 2
		}
	}
}

// toEnd is b up to its first "\n", included, when toLineEnd; else b.
func toEnd(b []byte, toLineEnd bool) []byte {
	if !toLineEnd {
		return b
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	return b
}

// recordsText is the text of records [from, to) of a file, read back.
type recordsText struct {
	fs       *corpus.File
	from     int
	firstRow uint32
	lines    [][]byte // the lines, without their line ends
}

// recordText is one record read back: its lines, its first line parsed,
// its range and its first line's.
type recordText struct {
	form   recordformat.Form
	layout recordformat.Layout
	lines  [][]byte
	head   recordformat.Line // offsets within lines[0]
	rng    Range
	first  Range
}

// readRecords reads the lines of records [from, to) of fs.
func (rb *readBack) readRecords(ctx context.Context, fs *corpus.File, from, to int) (*recordsText, error) {
	t := fs.Records()
	first, last := t.Line(from), t.Last(to-1)
	lines, err := rb.readLines(ctx, fs, first, last+1)
	if err != nil {
		return nil, err
	}
	return &recordsText{fs: fs, from: from, firstRow: first, lines: lines}, nil
}

// record returns record i of those read (0: the first), checked against
// the table.
func (rt *recordsText) record(i int) (recordText, error) {
	t := rt.fs.Records()
	k := rt.from + i
	lo, hi := t.Line(k)-rt.firstRow, t.Last(k)-rt.firstRow+1
	r := recordText{form: rt.fs.Form, layout: rt.fs.Layout, lines: rt.lines[lo:hi]}
	r.head = r.parser(false).Next(r.lines[0], 0)
	if !t.Matches(k, r.head, r.lines[0]) {
		return r, ErrChanged
	}
	line := int(t.Line(k))
	lastLine := r.lines[len(r.lines)-1]
	r.first = Range{Start: Position{Line: line}, End: Position{Line: line, Character: recordformat.UTF16Len(r.lines[0])}}
	r.rng = Range{Start: r.first.Start, End: Position{Line: line + len(r.lines) - 1, Character: recordformat.UTF16Len(lastLine)}}
	return r, nil
}

// evidence is the record's evidence text (spec §2), its lines joined with
// "\n".
func (r recordText) evidence() string {
	var sb strings.Builder
	p := r.parser(true)
	for i, l := range r.lines {
		line := r.head
		if i > 0 {
			sb.WriteByte('\n')
			line = p.Next(l, 0)
		}
		if line.JSON {
			sb.WriteString(recordformat.ValidText(recordformat.Prose(nil, l)))
			continue
		}
		sb.WriteString(recordformat.ValidText(l[line.Evidence:]))
	}
	return sb.String()
}

// parser is a parser of the record's file, in its layout, at a record's
// first line or (inRecord) after it.
func (r recordText) parser(inRecord bool) *recordformat.Parser {
	p := recordformat.Resume(r.form, inRecord)
	p.SetLayout(r.layout)
	return p
}

// maskContextLines is how many lines before the first line asked for are
// read too when masking is on, so that the masker sees the start of a key
// block (or record) that began before them: a PEM key is at most a few dozen
// lines of 64 characters.
const maskContextLines = 256

// readFrom reads the lines req asks for from f, an agent file opened for a
// client (ReadLines): from the file's sparse line index (index), to the
// file's end as it is now, not as far as it was indexed (a client reads
// what the file holds), each line capped, masked as the index masks
// evidence; File, Agent and Episode are the caller's to fill.
func (rb *readBack) readFrom(ctx context.Context, f *os.File, index []int64, req ReadRequest) (Lines, error) {
	n := req.First - 1 // 0-based
	from := n
	if rb.masker != nil {
		from = max(0, n-maskContextLines)
	}
	off, at := lineStart(index, from)
	if off > 0 && !lineStartsAt(f, off) {
		off, at = 0, 0 // rewritten since it was indexed: count from the start
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, off, 1<<62), 64<<10)
	// A line is read up to readCap bytes: past the cut, a margin that lets
	// the masker see whole a secret that crosses the cut.
	readCap := 0
	if req.MaxLineBytes > 0 {
		readCap = req.MaxLineBytes + 4<<10
	}

	var texts []string // context lines, then the lines asked for
	var cut []bool
	size := 0
	var out Lines
	for line := at; ; line++ {
		if line%1024 == 0 && ctx.Err() != nil {
			return Lines{}, ctx.Err()
		}
		if line >= n+req.Count {
			_, err := r.Peek(1)
			out.EOF = err != nil
			break
		}
		raw, long, err := readLineCapped(r, readCap)
		if err != nil && len(raw) == 0 && !long {
			if !errors.Is(err, io.EOF) {
				return Lines{}, err
			}
			out.EOF = true
			if line <= n {
				return Lines{}, &FieldError{"startLine", strconv.Itoa(req.First), "the file has " + strconv.Itoa(line) + " lines"}
			}
			break
		}
		if line < from {
			continue
		}
		text := recordformat.ValidText(raw)
		shown := len(text)
		if req.MaxLineBytes > 0 {
			shown = min(shown, req.MaxLineBytes)
		}
		if req.MaxBytes > 0 && line > n && size+shown > req.MaxBytes {
			out.Stopped = true
			break
		}
		texts = append(texts, text)
		cut = append(cut, long)
		if line >= n {
			size += shown
		}
	}

	texts = rb.maskLines(texts)
	for i, text := range texts[min(len(texts), n-from):] {
		c := cut[n-from+i]
		if req.MaxLineBytes > 0 && len(text) > req.MaxLineBytes {
			text, c = CutText(text, req.MaxLineBytes), true
		}
		out.Lines = append(out.Lines, Line{Number: req.First + i, Text: text, Cut: c})
	}
	return out, nil
}

// lineStart returns the offset at which to read to reach 0-based line n,
// and the number of the line found there, from a file's sparse line index.
func lineStart(index []int64, n int) (int64, int) {
	k := min(n/lineIndexEvery, len(index)-1)
	if k < 0 {
		return 0, 0
	}
	return index[k], k * lineIndexEvery
}

// lineStartsAt reports whether a line starts at offset off of f.
func lineStartsAt(f io.ReaderAt, off int64) bool {
	var b [1]byte
	_, err := f.ReadAt(b[:], off-1)
	return err == nil && b[0] == '\n'
}

// readLineCapped reads one line without its line end ("\n" or "\r\n"),
// keeping at most limit bytes of it (0: all); long reports that the line
// is longer than that. At the end of the file it returns io.EOF, with the
// last line if that has no line end.
func readLineCapped(r *bufio.Reader, limit int) (line []byte, long bool, err error) {
	total := 0
	var last byte
	for {
		chunk, err := r.ReadSlice('\n')
		body := chunk
		ended := err == nil
		if ended {
			body = body[:len(body)-1]
		}
		if len(body) > 0 {
			last = body[len(body)-1]
		}
		total += len(body)
		keep := body
		if limit > 0 {
			keep = keep[:min(len(keep), max(0, limit+1-len(line)))] // one more, for a "\r" to drop
		}
		line = append(line, keep...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if ended && last == '\r' {
			total--
			line = line[:min(len(line), total)]
		}
		if limit > 0 && len(line) > limit {
			line = line[:limit]
		}
		if ended {
			err = nil
		}
		return line, limit > 0 && total > limit, err
	}
}
