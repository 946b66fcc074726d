package retriever

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"runls/recordformat"
)

// Following the files (spec §7). Each update walks the run folder for agent
// files (discover), decides per file what it needs (plan) and reads that
// (read): nothing, the bytes appended since the last read, or the whole file
// again when it shrank, was replaced or was rewritten.
//
// Unchanged files cost a stat: a file is planned by its size, time and
// identity. Timestamps are coarse (a clock tick, or a second on some file
// systems), so a file changed within racyWindow of the time it was last read
// could have changed again without its time moving; such a file's content is
// checked (its head and the bytes before the read position) on each update
// until its time is older than that. Folders are handled the same way when a
// watcher runs: a folder the watcher saw no event in, whose time and identity
// did not change and are not racy, is not listed again.

// racyWindow is how recent a time must be to be distrusted.
const racyWindow = 2 * time.Second

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
	// discard: the read failed after it added docs [lo, hi) to the builder;
	// the commit kills them and the file keeps its old state.
	discard bool
	agent   uint32
}

// candidate is an agent file found by discovery.
type candidate struct {
	rel, abs, episode, epNum, agent string
	info                            fs.FileInfo
}

// dirState is a folder as the last walk listed it.
type dirState struct {
	dev, ino uint64
	mtime    int64
	listedAt int64    // wall clock just before the listing
	files    []string // regular files (in agent folders and below)
	dirs     []string // folders walked: episodes, agents, or any below an agent
}

// Folder levels of a run (spec §1).
const (
	levelRoot = iota
	levelEpisode
	levelAgent // an agent folder or any folder below it
)

// walk is one discovery of the run folder.
type walk struct {
	ix       *Index
	allDirty bool // the watcher lost events: list every folder
	seen     map[string]*dirState
	found    map[string]candidate
	episodes map[string]bool
}

// discover walks the run folder for agent files (spec §1). Links below the run
// folder are never followed; one that points outside is reported once.
// With a watcher running, a folder it saw no change in is not listed again
// (see followState.clean); its files are still each given a stat.
func (ix *Index) discover() (map[string]candidate, map[string]bool, error) {
	w := &walk{ix: ix, seen: map[string]*dirState{}, found: map[string]candidate{}, episodes: map[string]bool{}}
	w.allDirty = ix.fw.takeAllDirty()
	d, _, err := w.list(ix.fsys, ".", levelRoot, false)
	if err != nil {
		ix.fw.markAllDirty()
		return nil, nil, fmt.Errorf("read run folder %s: %w", ix.root, err)
	}
	for _, ep := range d.dirs {
		num, _ := EpisodeNumber(ep)
		er, err := ix.fsys.OpenRoot(ep)
		if err == nil {
			var ed *dirState
			if ed, _, err = w.list(er, ep, levelEpisode, false); err == nil {
				w.episodes[ep] = true
				for _, ag := range ed.dirs {
					w.agent(er, ag, ep+"/"+ag, ep, num, ag)
				}
			}
			er.Close()
		}
		if err != nil && w.cannotRead(ep, err) {
			w.episodes[ep] = true // an episode without agents that can be read
		}
	}
	ix.fw.dirs = w.seen
	ix.fw.setFolders(w.seen)
	return w.found, w.episodes, nil
}

// agent walks an agent folder, or a folder below one, opened from parent.
func (w *walk) agent(parent *os.Root, name, rel, episode, epNum, agent string) {
	r, err := parent.OpenRoot(name)
	if err != nil {
		w.cannotRead(rel, err)
		return
	}
	defer r.Close()
	for attempt := 0; attempt < 2; attempt++ {
		d, infos, err := w.list(r, rel, levelAgent, attempt > 0)
		if err != nil {
			w.cannotRead(rel, err)
			return
		}
		var cands []candidate
		stale := false
		for _, f := range d.files {
			info := infos[f]
			if info == nil { // the listing is the last walk's: stat the file
				info, err = r.Lstat(f)
				if err != nil || !info.Mode().IsRegular() {
					stale = true // listed again at once
					break
				}
			}
			frel := rel + "/" + f
			cands = append(cands, candidate{
				rel: frel, abs: w.ix.abs(frel), episode: episode, epNum: epNum, agent: agent, info: info,
			})
		}
		if stale && infos == nil {
			delete(w.seen, rel)
			continue
		}
		for _, c := range cands {
			w.found[c.rel] = c
		}
		for _, sub := range d.dirs {
			w.agent(r, sub, rel+"/"+sub, episode, epNum, agent)
		}
		return
	}
}

// list returns folder r's listing (rel names it), the last walk's when it is
// known to be unchanged; infos holds the entries' stats when it was listed now.
func (w *walk) list(r *os.Root, rel string, level int, force bool) (*dirState, map[string]fs.FileInfo, error) {
	info, err := r.Lstat(".")
	if err != nil {
		return nil, nil, err
	}
	dev, ino := fileID(info)
	mtime := info.ModTime().UnixNano()
	clean := w.ix.fw.clean(rel, ino) // first: it consumes the folder's events
	if old := w.ix.fw.dirs[rel]; old != nil && clean && !force && !w.allDirty &&
		old.dev == dev && old.ino == ino && old.mtime == mtime && mtime < old.listedAt-int64(racyWindow) {
		w.seen[rel] = old
		return old, nil, nil
	}
	d := &dirState{dev: dev, ino: ino, mtime: mtime, listedAt: time.Now().UnixNano()}
	w.ix.fw.listings.Add(1)
	f, err := r.Open(".")
	if err != nil {
		return nil, nil, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	infos := map[string]fs.FileInfo{}
	var wasDir map[string]bool
	if old := w.ix.fw.dirs[rel]; old != nil && len(old.dirs) > 0 {
		wasDir = make(map[string]bool, len(old.dirs))
		for _, name := range old.dirs {
			wasDir[name] = true
		}
	}
	for _, e := range entries {
		name := e.Name()
		child := name
		if rel != "." {
			child = rel + "/" + name
		}
		if level == levelRoot {
			if _, ok := EpisodeNumber(name); !ok {
				continue
			}
		}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			w.ix.warnLink(child)
		case t.IsDir():
			d.dirs = append(d.dirs, name)
		case t.IsRegular() && wasDir[name]:
			w.ix.noteOnce("replaced:"+child, "a folder was replaced by a file; the evidence of its files is dropped",
				zap.String("file", child))
			if level == levelAgent {
				d.files = append(d.files, name)
				infos[name], _ = e.Info()
			}
		case t.IsRegular() && level == levelAgent:
			info, err := e.Info()
			if err != nil {
				continue // gone since the folder was read
			}
			d.files = append(d.files, name)
			infos[name] = info
		}
	}
	w.seen[rel] = d
	return d, infos, nil
}

// cannotRead logs once that a folder cannot be read, unless it is gone (or no
// longer a folder) since its parent was listed; it reports whether it exists.
func (w *walk) cannotRead(rel string, err error) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false
	}
	w.ix.warnOnce("folder:"+rel, "cannot read folder", zap.String("folder", rel), zap.Error(err))
	return true
}

func (ix *Index) abs(rel string) string {
	if rel == "." {
		return ix.root
	}
	return ix.root + string(os.PathSeparator) + filepath.FromSlash(rel)
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
		if mtime < old.checkedAt-int64(racyWindow) {
			return nil
		}
		if old.binary { // its check is its head: read it again
			return &task{old: old, c: c, fresh: true, size: size}
		}
		// Racy: read checks the content, and reads nothing if it is the same.
		return &task{old: old, c: c, from: old.commitPos, size: size}
	case size == old.readPos || old.binary:
		// The same size with a new time: rewritten in place, or touched.
		return &task{old: old, c: c, fresh: true, size: size}
	}
	return &task{old: old, c: c, from: old.commitPos, size: size}
}

// read reads a file as planned into b. It returns the update to commit, or
// nil when there is nothing to commit; drop is true when the file could not be
// read (gone, or unreadable: logged once) and its old evidence must go.
func (ix *Index) read(t *task, b *builder) (u *update, drop bool) {
	if h := ix.fw.beforeRead; h != nil {
		h(t.c.rel)
	}
	checked := time.Now().UnixNano()
	f, err := openFile(ix.fsys, t.c.rel)
	if err != nil {
		ix.unreadable(t, err)
		return nil, true
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		if err == nil { // replaced by a folder since it was found: as gone
			err = fmt.Errorf("no longer a regular file: %w", fs.ErrNotExist)
		}
		ix.unreadable(t, err)
		return nil, true
	}
	if !ix.atPath(f, t.c.rel, t.c.info, info) {
		ix.unreadable(t, fmt.Errorf("replaced since it was listed: %w", fs.ErrNotExist))
		return nil, true
	}
	size := info.Size()
	dev, ino := fileID(info)
	mtime := info.ModTime().UnixNano()
	if t.old != nil && !t.fresh {
		switch {
		case dev != t.old.dev || ino != t.old.ino || size < t.old.readPos || ix.rewritten(f, t.old):
			t.fresh, t.from = true, 0
		case size == t.old.readPos && size == t.old.size && mtime == t.old.mtime:
			// Nothing new: the content checked the same. checkedAt is read
			// only by updates, which refreshMu orders.
			t.old.checkedAt = checked
			return nil, false
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
	next.dev, next.ino, next.size, next.mtime, next.checkedAt = dev, ino, size, mtime, checked
	u = &update{old: t.old, next: next, fresh: t.fresh, lo: uint32(len(b.seg.hash)), agent: next.agent}
	b.reserve(size - t.from)

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
				next.dev, next.ino, next.size, next.mtime, next.checkedAt = dev, ino, size, mtime, checked
				u.next, u.fresh = next, true
			}
			next.binary = true
			next.readPos = size
			ix.log.Debug("left out a binary file", zap.String("file", t.c.rel))
			return u, false
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
	// No bigger than what is left to read: a small file does not cost a
	// cleared 1 MiB block.
	block := make([]byte, min(ReadBlockBytes, max(size-from, 0)))
	var final []byte
	var finalPos int64
	for {
		want := min(int64(len(block)), size-pos)
		n := 0
		if want > 0 {
			if h := ix.fw.beforeBlock; h != nil {
				err = h(t.c.rel, pos)
			}
			if err == nil {
				n, err = f.ReadAt(block[:want], pos)
			}
			if err != nil && !errors.Is(err, io.EOF) {
				ix.unreadable(t, err)
				u.discard, u.hi = true, uint32(len(b.seg.hash))
				return u, true
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
	ix.readable(t.c.rel)
	if pos < size {
		// Truncated while it was read: next.size (the size before) is not
		// its size now, so the next update reads it again from its start;
		// until then a search leaves out pieces whose text changed.
		ix.noteOnce("shrunk:"+t.c.rel, "a file shrank while it was read; it is read again from its start", zap.String("file", t.c.rel))
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
	return u, false
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

// unreadable logs, once until the file is read again, why a file is left out.
func (ix *Index) unreadable(t *task, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		// Deleted since it was found: a change like any other, not a WARN.
		ix.noteOnce("vanished:"+t.c.rel, "a file vanished between its stat and its read; its evidence is dropped", zap.String("file", t.c.rel))
		return
	}
	if info, lerr := ix.fsys.Lstat(t.c.rel); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
		// Replaced by a link since it was listed (os.Root refuses one that
		// leads out of the run): reported as the walk reports links, once.
		ix.warnLink(t.c.rel)
		return
	}
	ix.warnOnce("unread:"+t.c.rel, "cannot read a file; it is left out until it can be read", zap.String("file", t.c.rel), zap.Error(err))
}

// noteOnce logs an unusual but harmless event once (at INFO).
func (ix *Index) noteOnce(key, msg string, fields ...zap.Field) {
	ix.warnedMu.Lock()
	seen := ix.warned[key]
	ix.warned[key] = true
	ix.warnedMu.Unlock()
	if !seen {
		ix.log.Info(msg, fields...)
	}
}

// readable forgets an unreadable file's WARN, so that it is logged again if
// the file becomes unreadable again.
func (ix *Index) readable(rel string) {
	key := "unread:" + rel
	ix.warnedMu.Lock()
	delete(ix.warned, key)
	ix.warnedMu.Unlock()
}

// atPath reports whether an opened regular file is the file at its path in
// the run, reached through no link: os.Root follows links that stay inside
// the run, in any element of a path, so a file or folder replaced by a link
// after it was listed would open the link's target (spec §1: links are never
// followed). The kernel tells the opened file's path: another path in the
// run means a link was followed. A path elsewhere (the run folder moved, or
// no /proc) says nothing of links: then the file must be the one listed at
// the path, or the one the path names now.
func (ix *Index) atPath(f *os.File, rel string, listed, opened fs.FileInfo) bool {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
		if p == ix.abs(rel) {
			return true
		}
		if strings.HasPrefix(p, ix.root+string(filepath.Separator)) {
			return false
		}
	}
	dev, ino := fileID(opened)
	if ldev, lino := fileID(listed); ldev == dev && lino == ino {
		return true
	}
	now, err := ix.fsys.Lstat(rel)
	if err != nil || !now.Mode().IsRegular() {
		return false
	}
	ndev, nino := fileID(now)
	return ndev == dev && nino == ino
}

// openFile opens a file listed as regular for reading without blocking: a
// FIFO put at its path since it was listed would block a plain open until a
// writer came. Opened so, a FIFO or device opens at once, and the caller's
// check of its type or identity leaves it out; O_NOCTTY keeps a terminal from
// becoming the process's.
func openFile(r *os.Root, rel string) (*os.File, error) {
	return r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
