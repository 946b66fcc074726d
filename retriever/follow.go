package retriever

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"go.uber.org/zap"

	"runls/recordformat"
)

// task is one file to read in an update.
type task struct {
	old   *fileState // nil for a new file
	next  *fileState // for a new file: its state, with id and agent set
	c     candidate
	fresh bool  // read from the start, dropping old evidence
	from  int64 // where reading starts
	size  int64
}

// update is what reading one file produced, to commit.
type update struct {
	old, next *fileState
	fresh     bool
	lo, hi    uint32 // the file's docs in the builder
	pending   []pendingDoc
}

// plan decides what a file needs (spec §7): nothing, its appended bytes, or a
// read from its start (new, shrunk, replaced, or rewritten: the last is told
// when the file is read, by its head and the bytes before the read position).
func (ix *Index) plan(old *fileState, c candidate) *task {
	size := c.info.Size()
	dev, ino := fileID(c.info)
	mtime := c.info.ModTime().UnixNano()
	if old == nil {
		ix.mu.Lock()
		agent, ok := ix.agentIDs[c.agent]
		if !ok {
			agent = uint32(len(ix.agents))
			ix.agents = append(ix.agents, c.agent)
			ix.agentIDs[c.agent] = agent
			ix.stats = append(ix.stats, agentStats{})
		}
		id := ix.nextID
		ix.nextID++
		ix.mu.Unlock()
		next := &fileState{
			id: id, rel: c.rel, abs: c.abs, episode: c.episode, epNum: c.epNum,
			agent: agent, form: recordformat.FormOf(c.rel), warned: &fileWarnings{},
		}
		return &task{next: next, c: c, fresh: true, size: size}
	}
	switch {
	case dev != old.dev || ino != old.ino, size < old.readPos:
		return &task{old: old, c: c, fresh: true, size: size}
	case size == old.size && mtime == old.mtime && size == old.readPos:
		return nil
	case size == old.readPos || old.binary:
		// The same size with a new time: rewritten in place, or touched.
		return &task{old: old, c: c, fresh: true, size: size}
	}
	return &task{old: old, c: c, from: old.commitPos, size: size}
}

// read reads a file as planned into b; nil when it could not be read (it is
// logged once and tried again at the next update).
func (ix *Index) read(t *task, b *builder) *update {
	f, err := ix.fsys.Open(t.c.rel)
	if err != nil {
		ix.unreadable(t, err)
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		ix.unreadable(t, err)
		return nil
	}
	size := info.Size()
	dev, ino := fileID(info)
	if t.old != nil && !t.fresh {
		if dev != t.old.dev || ino != t.old.ino || size < t.old.readPos || ix.rewritten(f, t.old) {
			t.fresh, t.from = true, 0
		}
	}
	var next *fileState
	switch {
	case t.old == nil:
		next = t.next
	case t.fresh:
		next = t.old.fresh()
	default:
		next = t.old.clone()
	}
	next.dev, next.ino, next.size, next.mtime = dev, ino, size, info.ModTime().UnixNano()
	u := &update{old: t.old, next: next, fresh: t.fresh, lo: uint32(len(b.seg.hash))}

	from := t.from
	if t.fresh {
		from = 0
	}
	if from < BinarySniffBytes {
		head := make([]byte, min(size, BinarySniffBytes)-from)
		n, _ := f.ReadAt(head, from)
		ix.checkBytes.Add(int64(n))
		if bytes.IndexByte(head[:n], 0) >= 0 {
			if !t.fresh {
				next = t.old.fresh()
				next.dev, next.ino, next.size, next.mtime = dev, ino, size, info.ModTime().UnixNano()
				u.next, u.fresh = next, true
			}
			next.binary = true
			next.readPos = size
			ix.log.Debug("left out a binary file", zap.String("file", t.c.rel))
			return u
		}
	}

	g := &ingester{ix: ix, b: b, fs: next, convs: map[string]uint32{}, masked: ix.masker != nil,
		rules: ix.interpreter != nil && next.form.IsRecord(), pos: from}
	if t.fresh {
		g.parser = recordformat.NewParser(next.form)
	} else {
		g.parser = recordformat.Resume(next.form, next.inRecord)
		g.line = next.commitLine
	}

	var carry []byte
	pos := from
	if !t.fresh && t.old.tail != nil && int64(len(t.old.tail)) == t.old.readPos-t.old.commitPos {
		carry = append(carry, t.old.tail...) // the pending tail, kept: not read again
		pos = t.old.readPos
	}
	block := make([]byte, ReadBlockBytes)
	var final []byte
	var finalPos int64
	for {
		want := min(int64(len(block)), size-pos)
		n := 0
		if want > 0 {
			n, err = f.ReadAt(block[:want], pos)
			if err != nil && !errors.Is(err, io.EOF) {
				ix.unreadable(t, err)
				return nil
			}
		}
		ix.bytesRead.Add(int64(n))
		b.inputBytes += int64(n)
		pos += int64(n)
		buf := append(carry, block[:n]...)
		last := pos >= size || n < int(want) || n == 0
		bufPos := g.pos
		if last {
			g.feed(buf, true)
			final, finalPos = buf, bufPos
			break
		}
		used := g.feed(buf, false)
		carry = append(carry[:0:0], buf[used:]...)
	}
	next.readPos = pos
	next.size = max(next.size, pos)
	if t.fresh || len(next.head) < checkBytes {
		next.head = ix.readCheck(f, 0, min(pos, checkBytes))
	}
	w := min(pos, checkBytes)
	if int64(len(final)) >= w {
		next.window = append([]byte(nil), final[int64(len(final))-w:]...)
	} else {
		next.window = ix.readCheck(f, pos-w, w)
	}
	if tl := next.readPos - next.commitPos; tl <= maxTailBytes && next.commitPos >= finalPos {
		next.tail = append([]byte(nil), final[next.commitPos-finalPos:]...)
	}
	u.hi = uint32(len(b.seg.hash))
	u.pending = g.tailDocs
	return u
}

// rewritten tells whether the bytes a file had at the last read changed.
func (ix *Index) rewritten(f *os.File, old *fileState) bool {
	head := ix.readCheck(f, 0, int64(len(old.head)))
	if !bytes.Equal(head, old.head) {
		return true
	}
	win := ix.readCheck(f, old.readPos-int64(len(old.window)), int64(len(old.window)))
	return !bytes.Equal(win, old.window)
}

func (ix *Index) readCheck(f *os.File, off, n int64) []byte {
	buf := make([]byte, n)
	got, _ := f.ReadAt(buf, off)
	ix.checkBytes.Add(int64(got))
	return buf[:got]
}

func (ix *Index) unreadable(t *task, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		return // deleted since it was found: the next update drops it
	}
	ix.warnOnce("unread:"+t.c.rel, "cannot read a file; it is left out until it can be read", zap.String("file", t.c.rel), zap.Error(err))
}

func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
