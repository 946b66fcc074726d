package retriever

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"runls/recordformat"
)

// Following the files (spec §7). Each update finds the agent files that may
// have changed (discover), decides per file what it needs (plan) and reads
// that (read): nothing, the bytes appended since the last read, or the whole
// file again when it shrank, was replaced or was rewritten.
//
// Without events, each file costs a stat per update: a file is planned by its
// size, time and identity. Timestamps are coarse (a clock tick, or a second on
// some file systems), so a file changed within racyWindow of the time it was
// last read could have changed again without its time moving; such a file's
// content is checked (its head and the bytes before the read position) on
// each update until its time is older than that. Folders are handled the same
// way: a folder whose time and identity did not change and are not racy is
// not listed again. With events (see Watch), a file is looked at only when an
// event names it, and then its content is checked even when its size and time
// say it is unchanged: the event says it was written.

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
	// evented: an event named the file since it was last planned, so its
	// content is checked even when its size and time say it is unchanged (a
	// write within the clock tick of the last read).
	evented bool
}

// dirState is a folder as the last walk listed it.
type dirState struct {
	dev, ino uint64
	mtime    int64
	listedAt int64    // wall clock just before the listing
	files    []string // regular files (in agent folders and below), sorted
	dirs     []string // folders walked: episodes, agents, or any below an agent; sorted
	dirIDs   []uint64 // the inode of each of dirs when it was listed
}

// Folder levels of a run (spec §1).
const (
	levelRoot = iota
	levelEpisode
	levelAgent // an agent folder or any folder below it
)

func levelOf(rel string) int {
	switch {
	case rel == ".":
		return levelRoot
	case !strings.Contains(rel, "/"):
		return levelEpisode
	}
	return levelAgent
}

// scan is one update's discovery of the agent files (spec §1): the files
// that may have changed, and the files gone. A full scan walks every folder:
// the first update, updates without a watcher, and those after events were
// lost. With a healthy watcher a scan is incremental: it visits only the
// folders and files the watcher's events named since the last update, the
// folders that are not watched (those are polled), and the files no event
// covers (see changeSet), so that it costs what changed, not what the run
// holds. Links below the run folder are never followed; one that points
// outside is reported once.
type scan struct {
	ix       *Index
	cs       changeSet
	full     bool
	old      map[string]*dirState // the folder cache before the scan
	dirs     map[string]*dirState // after it (the same map when incremental)
	found    map[string]candidate // files to plan (full: every agent file)
	removed  map[string]bool      // files gone (incremental: a full scan compares found with the index)
	visited  map[string]bool      // folders brought up to date
	fresh    map[string]bool      // folders walked with everything below them
	episodes bool                 // the root or an episode folder changed
	tree     bool                 // folders appeared or went

	// A full scan lists the root and the episodes, then walks the agent
	// folders side by side: their visits take mu to record what they found.
	mu     sync.Mutex
	queued *[]string // agent folders to walk after the episodes (full scans)
}

// visitMode says how a folder is brought up to date.
type visitMode struct {
	force   bool // list it, whatever its time says
	poll    bool // give each file a stat: no event vouches for them
	recurse bool // visit every subfolder, not only the new and the named
}

var (
	fullWalk  = visitMode{poll: true, recurse: true}
	freshWalk = visitMode{force: true, poll: true, recurse: true}
)

// discover scans the run folder for the agent files that may have changed.
//
// A folder's listing is cached, keyed by the folder's identity and time: a
// folder whose time did not move (and is not racy, see racyWindow) holds
// the same entries, since adding, removing or renaming an entry sets the
// time of the folder that holds it. Polling relies on that; events make even
// the folder's stat unneeded.
func (ix *Index) discover() (*scan, error) {
	cs := ix.fw.take()
	sc := &scan{ix: ix, cs: cs, old: ix.fw.dirs, found: map[string]candidate{}, removed: map[string]bool{},
		visited: map[string]bool{}, fresh: map[string]bool{}}
	left := ix.fw.left
	ix.fw.left = leftover{}
	if len(left.names) > 0 {
		if sc.cs.names == nil {
			sc.cs.names = map[string]bool{}
		}
		maps.Copy(sc.cs.names, left.names)
	}
	maps.Copy(sc.removed, left.removed)
	sc.episodes = left.episodes
	var err error
	if !cs.events || cs.all || sc.old["."] == nil {
		sc.full, sc.episodes = true, true
		sc.dirs = make(map[string]*dirState, len(sc.old))
		ix.fw.unreadable = map[string]bool{}
		sc.queued = new([]string)
		if err = sc.visit(nil, ".", ".", fullWalk); err == nil {
			sc.walkQueued()
		}
	} else {
		sc.dirs = sc.old
		err = sc.changes()
	}
	if err != nil {
		ix.fw.markAllDirty()
		return nil, err
	}
	ix.fw.dirs = sc.dirs
	if sc.tree || sc.full {
		ix.fw.setFolders(sc.dirs)
	}
	return sc, nil
}

// changes is an incremental scan: the folders events named, those not
// watched, and those that could not be read are visited, shallow first;
// then the files events named in folders not visited are given a stat.
func (sc *scan) changes() error {
	fw := &sc.ix.fw
	var todo []string
	for _, set := range []map[string]bool{sc.cs.dirs, sc.cs.polled, fw.unreadable} {
		for rel := range set {
			todo = append(todo, rel)
		}
	}
	slices.SortFunc(todo, func(a, b string) int {
		if c := levelDepth(a) - levelDepth(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	todo = slices.Compact(todo)
	for _, rel := range todo {
		if sc.visited[rel] || sc.covered(rel) {
			continue
		}
		if sc.dirs[rel] == nil {
			// Not in the cache: gone, or new (its parent's visit walks it),
			// or unreadable, tried again while its parent lists it.
			if !fw.unreadable[rel] {
				continue
			}
			if p := sc.dirs[parentOf(rel)]; p == nil || !contains(p.dirs, rel[strings.LastIndexByte(rel, '/')+1:]) {
				delete(fw.unreadable, rel)
				continue
			}
		}
		m := visitMode{force: sc.cs.dirs[rel], poll: sc.cs.polled[rel] || fw.unreadable[rel]}
		if err := sc.visit(nil, "", rel, m); err != nil {
			return err
		}
	}
	sc.statNamed()
	return nil
}

// walkQueued walks the agent folders of a full scan, side by side.
func (sc *scan) walkQueued() {
	agents := *sc.queued
	sc.queued = nil
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(sc.ix.workers, len(agents)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(agents)); i = next.Add(1) - 1 {
				_ = sc.visit(nil, "", agents[i], fullWalk) // only the root's visit fails
			}
		}()
	}
	wg.Wait()
}

// levelDepth orders folders shallow first.
func levelDepth(rel string) int {
	if rel == "." {
		return -1
	}
	return strings.Count(rel, "/")
}

// covered reports whether a folder above rel was walked with everything
// below it in this scan.
func (sc *scan) covered(rel string) bool {
	for rel != "." {
		rel = parentOf(rel)
		if sc.fresh[rel] {
			return true
		}
	}
	return false
}

// statNamed gives a stat to the files that may have changed although no
// listing did: the files events named (written in place) in folders not
// visited, the files that are hard links (written through another path,
// their events go to another folder) and those whose last read failed.
func (sc *scan) statNamed() {
	fw := &sc.ix.fw
	byDir := map[string][]string{}
	add := func(rel string) {
		if _, ok := sc.found[rel]; ok {
			return
		}
		dir := parentOf(rel)
		if levelOf(dir) != levelAgent || sc.visited[dir] && !fw.pollFiles[rel] {
			return
		}
		d := sc.dirs[dir]
		if d == nil || !contains(d.files, rel[len(dir)+1:]) {
			delete(fw.pollFiles, rel)
			return
		}
		byDir[dir] = append(byDir[dir], rel)
	}
	for rel := range sc.cs.names {
		add(rel)
	}
	for rel := range fw.pollFiles {
		add(rel)
	}
	for dir, rels := range byDir {
		r, err := sc.ix.fsys.OpenRoot(dir)
		if err != nil {
			continue // gone or unreadable: the events of that list its parent
		}
		for _, rel := range rels {
			info, err := r.Lstat(rel[len(dir)+1:])
			fw.stats.Add(1)
			if err == nil && info.Mode().IsRegular() {
				sc.found[rel] = sc.candidate(rel, info, sc.cs.names[rel])
			}
		}
		r.Close()
	}
}

// visit brings folder rel up to date as m says. parent is the opened folder
// that holds it, under name; nil: rel is opened from the run folder.
func (sc *scan) visit(parent *os.Root, name, rel string, m visitMode) error {
	ix := sc.ix
	r := ix.fsys
	if rel != "." {
		var err error
		if parent != nil {
			r, err = parent.OpenRoot(name)
		} else {
			r, err = ix.fsys.OpenRoot(rel)
		}
		if err != nil {
			sc.unlisted(rel, err)
			return nil
		}
		defer r.Close()
	}
	old := sc.old[rel]
	for attempt := 0; attempt < 2; attempt++ {
		d, infos, err := sc.list(r, rel, m.force || attempt > 0, &m)
		if err != nil {
			if rel == "." {
				return fmt.Errorf("read run folder %s: %w", ix.root, err)
			}
			sc.unlisted(rel, err)
			return nil
		}
		cands, stale := sc.files(r, rel, d, old, infos, m)
		if stale && infos == nil {
			continue // a file went since the cached listing: list it again
		}
		sc.mu.Lock()
		delete(ix.fw.unreadable, rel)
		sc.visited[rel] = true
		if m.recurse {
			sc.fresh[rel] = true
		}
		for _, c := range cands {
			sc.found[c.rel] = c
		}
		if infos != nil {
			if old != nil && !sc.full {
				sc.diff(rel, old, d)
			}
			if old == nil || !slices.Equal(old.dirs, d.dirs) {
				sc.tree = true
				sc.episodes = sc.episodes || levelOf(rel) < levelAgent
			}
		}
		sc.dirs[rel] = d
		sc.mu.Unlock()
		return sc.subfolders(r, rel, d, old, infos != nil, m)
	}
	return nil
}

// files returns the candidates among folder rel's files: each of them when
// m.poll; otherwise those new in a listing made now, and those events named.
// stale reports a file of a cached listing that is gone or no longer a
// regular file.
func (sc *scan) files(r *os.Root, rel string, d, old *dirState, infos map[string]fs.FileInfo, m visitMode) (cands []candidate, stale bool) {
	if levelOf(rel) != levelAgent {
		return nil, false
	}
	for _, f := range d.files {
		frel := rel + "/" + f
		evented := sc.cs.names[frel]
		isNew := infos != nil && (old == nil || !contains(old.files, f))
		if !m.poll && !evented && !isNew {
			continue
		}
		info := infos[f]
		if info == nil { // the cached listing: stat the file
			var err error
			info, err = r.Lstat(f)
			sc.ix.fw.stats.Add(1)
			if err != nil || !info.Mode().IsRegular() {
				return nil, true
			}
		}
		cands = append(cands, sc.candidate(frel, info, evented))
	}
	return cands, false
}

// subfolders visits the subfolders of a visited folder: each of them when
// m.recurse; otherwise those new in a listing made now, those another folder
// replaced, and those events named, each walked afresh.
func (sc *scan) subfolders(r *os.Root, rel string, d, old *dirState, listed bool, m visitMode) error {
	for i, sub := range d.dirs {
		srel := sub
		if rel != "." {
			srel = rel + "/" + sub
		}
		if m.recurse {
			if sc.queued != nil && levelOf(rel) == levelEpisode {
				*sc.queued = append(*sc.queued, srel)
				continue
			}
			if err := sc.visit(r, sub, srel, m); err != nil {
				return err
			}
			continue
		}
		replaced := false
		if listed {
			j, ok := slices.BinarySearch(oldDirs(old), sub)
			replaced = !ok || old.dirIDs[j] != d.dirIDs[i]
		}
		if replaced || sc.cs.names[srel] {
			sc.drop(srel)
			if err := sc.visit(r, sub, srel, freshWalk); err != nil {
				return err
			}
		}
	}
	return nil
}

func oldDirs(d *dirState) []string {
	if d == nil {
		return nil
	}
	return d.dirs
}

// diff records what a folder's new listing no longer holds: those files are
// gone, and so is everything below those folders.
func (sc *scan) diff(rel string, old, d *dirState) {
	for _, f := range old.files {
		if !contains(d.files, f) {
			sc.removed[rel+"/"+f] = true
		}
	}
	for _, s := range old.dirs {
		if !contains(d.dirs, s) {
			if rel != "." {
				s = rel + "/" + s
			}
			sc.drop(s)
		}
	}
}

// drop forgets folder rel and everything below it: their files are gone.
func (sc *scan) drop(rel string) {
	d := sc.old[rel]
	if d == nil {
		return
	}
	delete(sc.dirs, rel)
	sc.tree = true
	sc.episodes = sc.episodes || levelOf(rel) < levelAgent
	for _, f := range d.files {
		sc.removed[rel+"/"+f] = true
	}
	for _, s := range d.dirs {
		sc.drop(rel + "/" + s)
	}
}

// unlisted handles a folder that could not be opened or listed: gone (or no
// longer a folder) since its parent was listed, or unreadable, which is
// logged once and tried again at each update. Its files are dropped.
func (sc *scan) unlisted(rel string, err error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.drop(rel)
	sc.visited[rel] = true
	fw := &sc.ix.fw
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		delete(fw.unreadable, rel)
		return
	}
	sc.ix.warnOnce("folder:"+rel, "cannot read folder", zap.String("folder", rel), zap.Error(err))
	if !fw.unreadable[rel] {
		fw.unreadable[rel] = true
		sc.episodes = sc.episodes || levelOf(rel) < levelAgent
	}
}

// episodeSet lists the episode folders: those listed, and those that exist
// but cannot be read.
func (sc *scan) episodeSet() map[string]bool {
	eps := map[string]bool{}
	if root := sc.dirs["."]; root != nil {
		for _, ep := range root.dirs {
			if sc.dirs[ep] != nil || sc.ix.fw.unreadable[ep] {
				eps[ep] = true
			}
		}
	}
	return eps
}

func (sc *scan) candidate(rel string, info fs.FileInfo, evented bool) candidate {
	ep, rest, _ := strings.Cut(rel, "/")
	agent, _, _ := strings.Cut(rest, "/")
	num, _ := EpisodeNumber(ep)
	return candidate{rel: rel, abs: sc.ix.abs(rel), episode: ep, epNum: num, agent: agent, info: info, evented: evented}
}

// list returns folder r's listing (rel names it), the cached one when the
// folder's identity and time say it is unchanged; infos holds the entries'
// stats when it was listed now. With a watcher running, the folder is
// watched first; when its watch begins now, m.poll is set: what changed in
// it before raised no event.
func (sc *scan) list(r *os.Root, rel string, force bool, m *visitMode) (*dirState, map[string]fs.FileInfo, error) {
	ix := sc.ix
	info, err := r.Lstat(".")
	ix.fw.stats.Add(1)
	if err != nil {
		return nil, nil, err
	}
	dev, ino := fileID(info)
	mtime := info.ModTime().UnixNano()
	if ix.fw.watch(rel, ino) {
		m.poll = true
	}
	old := sc.old[rel]
	if old != nil && !force && old.dev == dev && old.ino == ino && old.mtime == mtime && mtime < old.listedAt-int64(racyWindow) {
		return old, nil, nil
	}
	d := &dirState{dev: dev, ino: ino, mtime: mtime, listedAt: time.Now().UnixNano()}
	ix.fw.listings.Add(1)
	f, err := r.Open(".")
	if err != nil {
		return nil, nil, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	// A folder opened in an os.Root reads each entry's stat with the listing.
	ix.fw.stats.Add(int64(len(entries)))
	level := levelOf(rel)
	infos := map[string]fs.FileInfo{}
	type sub struct {
		name string
		ino  uint64
	}
	var subs []sub
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
			ix.warnLink(child)
		case t.IsDir():
			info, err := e.Info()
			if err != nil {
				continue // gone since the folder was read
			}
			_, ino := fileID(info)
			subs = append(subs, sub{name, ino})
		case t.IsRegular() && old != nil && contains(old.dirs, name):
			ix.noteOnce("replaced:"+child, "a folder was replaced by a file; the evidence of its files is dropped",
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
	slices.Sort(d.files)
	slices.SortFunc(subs, func(a, b sub) int { return strings.Compare(a.name, b.name) })
	for _, s := range subs {
		d.dirs = append(d.dirs, s.name)
		d.dirIDs = append(d.dirIDs, s.ino)
	}
	return d, infos, nil
}

// contains reports whether sorted holds s.
func contains(sorted []string, s string) bool {
	_, ok := slices.BinarySearch(sorted, s)
	return ok
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
		if !c.evented && mtime < old.checkedAt-int64(racyWindow) {
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

// readBuffer is a worker's block buffer, kept from file to file.
type readBuffer struct{ block []byte }

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
func (ix *Index) read(t *task, b *builder, dir *folder, buf *readBuffer) (u *update, drop bool) {
	if h := ix.fw.beforeRead; h != nil {
		h(t.c.rel)
	}
	checked := time.Now().UnixNano()
	var f fileReader
	var err error
	atPath := false
	if dir != nil {
		f, atPath, err = dir.open(t.c.rel[strings.LastIndexByte(t.c.rel, '/')+1:])
	} else {
		f, err = openFile(ix.fsys, t.c.rel)
	}
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
	if !atPath && !ix.atPath(f, t.c.rel, t.c.info, info) {
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
	var carry []byte
	pos := from
	if !t.fresh && t.old.tail != nil && int64(len(t.old.tail)) == t.old.readPos-t.old.commitPos {
		carry = append(carry, t.old.tail...) // the pending tail, kept: not read again
		pos = t.old.readPos
	}
	// No bigger than what is left to read: a small file does not cost a
	// cleared 1 MiB block.
	block := buf.get(min(ReadBlockBytes, max(size-pos, 0)))
	readBlock := func(want int64) (int, error) {
		if want <= 0 {
			return 0, nil
		}
		var err error
		if h := ix.fw.beforeBlock; h != nil {
			err = h(t.c.rel, pos)
		}
		n := 0
		if err == nil {
			n, err = f.ReadAt(block[:want], pos)
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return n, err
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
		ix.unreadable(t, err)
		u.discard, u.hi = true, u.lo
		return u, true
	}
	if pos < BinarySniffBytes && bytes.IndexByte(block[:min(int64(n), BinarySniffBytes-pos)], 0) >= 0 {
		ix.checkBytes.Add(int64(n))
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
	if pos == 0 {
		next.head = append([]byte(nil), block[:min(n, checkBytes)]...)
	}

	g := &ingester{ix: ix, b: b, fs: next, convs: map[string]uint32{}, masked: ix.masker != nil,
		rules: ix.interpreter != nil && next.form.IsRecord(), pos: from}
	if t.fresh {
		g.parser = recordformat.NewParser(next.form)
	} else {
		g.parser = recordformat.Resume(next.form, next.inRecord)
		g.line = next.commitLine
	}

	var final []byte
	var finalPos int64
	for first := true; ; first = false {
		if !first {
			want = min(int64(len(block)), size-pos)
			if n, err = readBlock(want); err != nil {
				ix.unreadable(t, err)
				u.discard, u.hi = true, uint32(len(b.seg.hash))
				return u, true
			}
		}
		ix.bytesRead.Add(int64(n))
		b.inputBytes += int64(n)
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
	ix.readable(t.c.rel)
	if pos < size {
		// Truncated while it was read: next.size (the size before) is not
		// its size now, so the next update reads it again from its start;
		// until then a search leaves out pieces whose text changed.
		ix.noteOnce("shrunk:"+t.c.rel, "a file shrank while it was read; it is read again from its start", zap.String("file", t.c.rel))
	}
	next.readPos = pos
	next.size = max(next.size, pos)
	if len(next.head) < checkBytes && next.readPos > int64(len(next.head)) {
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
func (ix *Index) rewritten(f fileReader, old *fileState) bool {
	head := ix.readCheck(f, 0, int64(len(old.head)))
	if !bytes.Equal(head, old.head) {
		return true
	}
	win := ix.readCheck(f, old.readPos-int64(len(old.window)), int64(len(old.window)))
	return !bytes.Equal(win, old.window)
}

func (ix *Index) readCheck(f fileReader, off, n int64) []byte {
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
	ix.unreadWarned.Store(true)
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
	if !ix.unreadWarned.Load() {
		return // no file was ever unreadable: nothing to forget
	}
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
func (ix *Index) atPath(f fileReader, rel string, listed, opened fs.FileInfo) bool {
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

// fileReader is a file opened to be read by an update: an *os.File, or on
// Linux a bare descriptor opened in a folder (see openNoFollow), which costs
// neither a poller registration nor a finalizer.
type fileReader interface {
	io.ReaderAt
	Stat() (fs.FileInfo, error)
	Fd() uintptr
	Close() error
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
