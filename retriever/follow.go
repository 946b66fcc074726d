package retriever

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

// Following the files (spec §7). Each update finds the agent files that may
// have changed (discover), decides per file what it needs (plan) and reads
// that (read): nothing, the bytes appended since the last read, or the whole
// file again when it shrank, was replaced or was rewritten.
//
// Without events, each file costs a stat per update: a file is planned by its
// size, time and identity. Timestamps are coarse (a clock tick, or a second on
// some file systems), so a file changed within runfs.RacyWindow of the time it was
// last read could have changed again without its time moving; such a file's
// content is checked (its head and the bytes before the read position) on
// each update until its time is older than that. Folders are handled the same
// way: a folder whose time and identity did not change and are not racy is
// not listed again. With events (see Watch), a file is looked at only when an
// event names it, and then its content is checked even when its size and time
// say it is unchanged: the event says it was written.

// task is one file to read in an update.
type task struct {
	old   *corpus.File // nil for a new file
	next  *corpus.File // for a new file: its state, with id and agent set
	c     runfs.Candidate
	fresh bool  // read from the start, dropping old evidence
	from  int64 // where reading starts
	size  int64
	// confirmed: old was racy when read, and is now checked the same out
	// of the racy window (State.Confirm).
	confirmed bool
}

// knownOf is what following's recheck compares an opened file with.
func knownOf(fs *corpus.File) runfs.Known {
	return runfs.Known{Dev: fs.Dev, Ino: fs.Ino, Size: fs.Size, ReadPos: fs.ReadPos, Mtime: fs.Mtime}
}

// plan decides what a file needs (spec §7): nothing, its appended bytes, or a
// read from its start (new, shrunk, replaced, or rewritten: the last is told
// when the file is read, by its head and the bytes before the read position).
func (ix *Index) plan(old *corpus.File, c runfs.Candidate) *task {
	size, dev, ino, mtime := c.Info.Size, c.Info.Dev, c.Info.Ino, c.Info.Mtime
	if old == nil {
		ix.mu.Lock()
		agent, ok := ix.state.AgentIDs[c.Agent]
		if !ok {
			agent = uint32(len(ix.state.Agents))
			ix.state.Agents = append(ix.state.Agents, c.Agent)
			ix.state.AgentIDs[c.Agent] = agent
			ix.state.Stats.Grow(agent)
		}
		id := ix.state.NextID
		ix.state.NextID++
		ix.mu.Unlock()
		form := recordformat.FormOf(c.Rel)
		next := &corpus.File{
			ID: id, Agent: agent, Form: form,
		}
		next.SetTable(corpus.NewRecords(form))
		next.SetShared(corpus.NewWarnings(form), newFileMemo(form))
		next.SetPath(c.Rel, c.Episode, c.EpNum) // discovery cut both of c.Rel
		return &task{next: next, c: c, fresh: true, size: size}
	}
	switch {
	case dev != old.Dev || ino != old.Ino, size < old.ReadPos:
		return &task{old: old, c: c, fresh: true, size: size}
	case size == old.Size && mtime == old.Mtime && size == old.ReadPos:
		if c.Info.Ctime != old.Ctime {
			// The same size and time, but the inode changed since: rewritten
			// with its time set back (or its mode changed), told only so.
			return &task{old: old, c: c, fresh: true, size: size}
		}
		if !c.Evented && !runfs.Racy(mtime, old.CheckedAt) {
			return nil
		}
		if old.Binary { // its check is its head: read it again
			return &task{old: old, c: c, fresh: true, size: size}
		}
		// Racy: read checks the content, and reads nothing if it is the same.
		return &task{old: old, c: c, from: old.CommitPos, size: size}
	case size == old.ReadPos || old.Binary:
		// The same size with a new time: rewritten in place, or touched.
		return &task{old: old, c: c, fresh: true, size: size}
	}
	return &task{old: old, c: c, from: old.CommitPos, size: size}
}

// readBuffer is a worker's block buffer and ingesting scratch, kept from
// file to file.
type readBuffer struct {
	block   []byte
	scratch ingestScratch
	file    runfs.RawFile // the file read, where it is opened bare (folder.open)
}

func (r *readBuffer) get(n int64) []byte {
	if int64(cap(r.block)) < n {
		r.block = make([]byte, n)
	}
	return r.block[:n]
}

// firstBlockBytes is the most read at first from a file whose head is
// checked for a NUL: small files are read in one block, and a large binary
// file costs little more than its check.
const firstBlockBytes = 64 << 10

// read reads a file as planned into b. dir is the opened folder that holds
// the file (nil: it is opened from the run folder), and buf the worker's
// block buffer. It returns the update to commit, or nil when there is nothing
// to commit; drop is true when the file could not be read (gone, or
// unreadable: logged once) and its old evidence must go.
func (ix *Index) read(t *task, b *corpus.Builder, dir *runfs.Folder, buf *readBuffer) (u *corpus.Update, drop bool) {
	if h := ix.fw.beforeRead; h != nil {
		h(t.c.Rel)
	}
	checked := time.Now().UnixNano()
	f, info := t.open(ix, dir, buf)
	if f == nil {
		return nil, true
	}
	defer f.Close()
	size := info.Size()
	dev, ino := runfs.FileID(info)
	mtime := info.ModTime().UnixNano()
	if t.old != nil && !t.fresh {
		switch runfs.Recheck(knownOf(t.old), info, func() bool { return rewritten(f, t.old, &ix.checkBytes) }) {
		case runfs.RecheckFresh:
			t.fresh, t.from = true, 0
		case runfs.RecheckNothing:
			// checkedAt is read only by updates, which refreshMu orders.
			t.old.CheckedAt = checked
			t.confirmed = runfs.Racy(t.old.Mtime, t.old.ReadAt) && !runfs.Racy(t.old.Mtime, checked)
			return nil, false
		}
		if !t.fresh && layoutChanged(f, t.old, size, buf, &ix.checkBytes) {
			t.fresh, t.from = true, 0
		}
	}
	next := t.nextVersion()
	next.Dev, next.Ino, next.Size, next.Mtime, next.CheckedAt, next.ReadAt = dev, ino, size, mtime, checked, checked
	next.Ctime = runfs.FileCtime(info)
	u = &corpus.Update{Old: t.old, Next: next, Fresh: t.fresh, Lo: uint32(b.Docs()), Agent: next.Agent}
	refused := b.Refused()
	b.ReserveInput(size - t.from)

	from, pos, carry := t.start()
	// No bigger than what is left to read: a small file does not cost a
	// cleared 1 MiB block.
	block := buf.get(min(ReadBlockBytes, max(size-pos, 0)))
	readBlock := func(want int64) (int, error) {
		return readBlockAt(f, block[:max(want, 0)], pos, t.c.Rel, ix.fw.beforeBlock)
	}
	// The first block is read before anything is ingested, and the part of
	// it within the file's first BinarySniffBytes is checked for a NUL (the
	// bytes before pos were checked when they were read).
	want := min(int64(len(block)), size-pos)
	if pos < BinarySniffBytes {
		want = min(want, firstBlockBytes)
	}
	n, err := readBlock(want)
	if err != nil {
		ix.once.unreadable(ix.fsys, ix.root, t.c.Rel, err)
		u.Discard, u.Hi = true, u.Lo
		return u, true
	}
	if pos < BinarySniffBytes && bytes.IndexByte(block[:min(int64(n), BinarySniffBytes-pos)], 0) >= 0 {
		ix.checkBytes.Add(int64(n))
		t.binary(ix, u, info, checked)
		return u, false
	}
	if pos == 0 {
		next.Head = corpus.CheckOf(block[:min(n, corpus.CheckBytes)])
	}

	g := newIngester(ix, b, next, buf, from, t.fresh)

	var final []byte
	var finalPos int64
	for first := true; ; first = false {
		if !first {
			want = min(int64(len(block)), size-pos)
			if n, err = readBlock(want); err != nil {
				ix.once.unreadable(ix.fsys, ix.root, t.c.Rel, err)
				u.Discard, u.Hi = true, uint32(b.Docs())
				return u, true
			}
		}
		ix.bytesRead.Add(int64(n))
		b.InputBytes += int64(n)
		pos += int64(n)
		data := block[:n]
		if len(carry) > 0 {
			data = append(carry, data...)
		}
		last := pos >= size || n < int(want) || n == 0
		bufPos := g.pos
		if last {
			g.feed(data, true)
			final, finalPos = data, bufPos
			break
		}
		used := g.feed(data, false)
		carry = append(carry[:0:0], data[used:]...)
	}
	if b.Refused() > refused {
		// More pieces than a batch can number (bm25.Builder.Full): what was
		// read is not used, and the file is read again at the next update,
		// which starts new batches; a file that alone has more is left out
		// at every update, told once.
		ix.once.warn("full:"+t.c.Rel, "a file has more pieces than one batch of the index holds; it is left out", zap.String("file", t.c.Rel))
		u.Discard, u.Hi = true, uint32(b.Docs())
		return u, true
	}
	ix.once.readable(t.c.Rel)
	if pos < size {
		// Truncated while it was read: next.size (the size before) is not
		// its size now, so the next update reads it again from its start;
		// until then a search leaves out pieces whose text changed.
		ix.once.note("shrunk:"+t.c.Rel, "a file shrank while it was read; it is read again from its start", zap.String("file", t.c.Rel))
	}
	next.ReadPos = pos
	next.Size = max(next.Size, pos)
	keepChecks(next, f, final, finalPos, &ix.checkBytes)
	u.Hi = uint32(b.Docs())
	u.Pending = g.tailDocs
	return u, false
}

// readBlockAt reads len(block) bytes of f at pos (none when block is
// empty), after the test hook before, if any; the end of the file is no
// error.
func readBlockAt(f runfs.FileReader, block []byte, pos int64, rel string, before func(string, int64) error) (int, error) {
	if len(block) == 0 {
		return 0, nil
	}
	var err error
	if before != nil {
		err = before(rel, pos)
	}
	n := 0
	if err == nil {
		n, err = f.ReadAt(block, pos)
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// newIngester starts the ingester of next's bytes from offset from into
// b: a file read from its start (fresh) parses from its first line, else
// from the state its last commit left.
func newIngester(ix *Index, b *corpus.Builder, next *corpus.File, buf *readBuffer, from int64, fresh bool) *ingester {
	g := &ingester{ix: ix, b: b, fs: next, scratch: &buf.scratch, masked: ix.masker != nil,
		rules: ix.interpreter != nil && next.Form.IsRecord(), pos: from}
	if fresh {
		g.parser = *recordformat.NewParser(next.Form)
	} else {
		g.parser = *recordformat.Resume(next.Form, next.InRecord)
		g.line = next.CommitLine
	}
	g.parser.SetLayout(next.Layout)
	return g
}

// nextVersion is the version of t's file its read makes: new, read from
// its start, or appended to.
func (t *task) nextVersion() *corpus.File {
	switch {
	case t.old == nil:
		return t.next
	case t.fresh:
		return t.old.Fresh(newFileMemo(t.old.Form))
	}
	return t.old.Clone()
}

// start is where t's read starts: from, the offset its ingesting starts at,
// pos, the offset its reading starts at, and carry, the pending tail kept
// from the last read (the bytes between them, not read again).
func (t *task) start() (from, pos int64, carry []byte) {
	if t.fresh {
		return 0, 0, nil
	}
	from, pos = t.from, t.from
	if tail := t.old.Tail(); tail != nil && int64(len(tail)) == t.old.ReadPos-t.old.CommitPos {
		carry = append(carry, tail...) // the pending tail, kept: not read again
		pos = t.old.ReadPos
	}
	return from, pos, carry
}

// open opens t's file for reading (in dir, or from the run folder) and
// checks that it is the regular file listed at its path; nil when it is
// not, which is logged.
func (t *task) open(ix *Index, dir *runfs.Folder, buf *readBuffer) (runfs.FileReader, fs.FileInfo) {
	var f runfs.FileReader
	var err error
	atPath := false
	if dir != nil {
		f, atPath, err = dir.Open(t.c.Rel[strings.LastIndexByte(t.c.Rel, '/')+1:], &buf.file)
	} else {
		f, err = runfs.OpenFile(ix.fsys, t.c.Rel)
	}
	if err != nil {
		ix.once.unreadable(ix.fsys, ix.root, t.c.Rel, err)
		return nil, nil
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		if err == nil { // replaced by a folder since it was found: as gone
			err = fmt.Errorf("no longer a regular file: %w", fs.ErrNotExist)
		}
		f.Close()
		ix.once.unreadable(ix.fsys, ix.root, t.c.Rel, err)
		return nil, nil
	}
	if !atPath && !runfs.AtPath(ix.root, ix.fsys, f, t.c.Rel, t.c.Info, info) {
		f.Close()
		ix.once.unreadable(ix.fsys, ix.root, t.c.Rel, fmt.Errorf("replaced since it was listed: %w", fs.ErrNotExist))
		return nil, nil
	}
	return f, info
}

// binary makes u's file a binary file, left out whole: a version read from
// its start, of stat info, checked at checked.
func (t *task) binary(ix *Index, u *corpus.Update, info fs.FileInfo, checked int64) {
	next := u.Next
	if !t.fresh {
		next = t.old.Fresh(newFileMemo(t.old.Form))
		next.Dev, next.Ino = runfs.FileID(info)
		next.Size, next.Mtime, next.CheckedAt, next.ReadAt = info.Size(), info.ModTime().UnixNano(), checked, checked
		next.Ctime = runfs.FileCtime(info)
		u.Next, u.Fresh = next, true
	}
	next.Binary = true
	next.ReadPos = next.Size
	ix.log.Debug("left out a binary file", zap.String("file", t.c.Rel))
}

// keepChecks keeps what tells a rewrite of next's file f at the next
// update: its head, the window before its read position (from final, the
// last bytes fed, which start at finalPos, or read again), and the pending
// tail when it is short.
func keepChecks(next *corpus.File, f runfs.FileReader, final []byte, finalPos int64, counted *atomic.Int64) {
	pos := next.ReadPos
	if next.Head.Len() < corpus.CheckBytes && next.ReadPos > int64(next.Head.Len()) {
		next.Head = corpus.CheckOf(readCheck(f, 0, min(pos, corpus.CheckBytes), counted))
	}
	w := min(pos, corpus.CheckBytes)
	if int64(len(final)) >= w {
		next.Window = corpus.CheckOf(final[int64(len(final))-w:])
	} else {
		next.Window = corpus.CheckOf(readCheck(f, pos-w, w, counted))
	}
	if tl := next.ReadPos - next.CommitPos; tl <= corpus.MaxTailBytes && next.CommitPos >= finalPos {
		next.SetTail(append([]byte(nil), final[next.CommitPos-finalPos:]...))
	}
}

// layoutChanged tells whether a record file that grows is of another layout
// now (spec §2: the layout is decided from its first lines, and the run's
// own forms win; §15: the answers are a fresh index's): decided at a first
// read of one line, a foreign-looking line followed by the run's records,
// or a line of neither kind followed by a foreign log's, was kept, where a
// fresh read of the grown file decides otherwise. While the file holds
// fewer records than Detect reads lines (each record starts with a
// non-empty line: with as many, Detect's lines are all there) and what was
// read of it is shorter than the first block a fresh read decides from,
// that head (read into buf's block before the file's own read) is decided
// again, ~14 µs for 99 lines; a file of another layout now is read again
// from its start. Left: a first line longer than the first block, which a
// fresh read decides from the blocks after it, is decided again no further.
func layoutChanged(f runfs.FileReader, old *corpus.File, size int64, buf *readBuffer, counted *atomic.Int64) bool {
	if !old.Form.IsRecord() || !old.LayoutSet || old.Binary || old.ReadPos >= firstBlockBytes || old.Records().Len() >= recordformat.DetectLines {
		return false
	}
	head := buf.get(min(size, firstBlockBytes))
	n, err := f.ReadAt(head, 0)
	counted.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) {
		return false // the read that follows says what fails
	}
	layout, ok := recordformat.Detect(old.Form, head[:n])
	return ok && layout != old.Layout
}

// rewritten tells whether the bytes a file had at the last read changed.
// (The bytes read to check are counted in counted.)
func rewritten(f runfs.FileReader, old *corpus.File, counted *atomic.Int64) bool {
	head := readCheck(f, 0, int64(old.Head.Len()), counted)
	if !bytes.Equal(head, old.Head.Bytes()) {
		return true
	}
	win := readCheck(f, old.ReadPos-int64(old.Window.Len()), int64(old.Window.Len()), counted)
	return !bytes.Equal(win, old.Window.Bytes())
}

// readCheck reads n bytes of f at off to tell a rewrite, counting them.
func readCheck(f runfs.FileReader, off, n int64, counted *atomic.Int64) []byte {
	buf := make([]byte, n)
	got, _ := f.ReadAt(buf, off)
	counted.Add(int64(got))
	return buf[:got]
}
