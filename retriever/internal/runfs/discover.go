package runfs

// This file holds discovery (spec §1, §7): the walk of the run's episode and
// agent folders that finds the agent files an update may have to read, with
// the folder listings it keeps between updates (Discovery, discovery.go).

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"go.uber.org/zap"
)

// Candidate is an agent file found by discovery.
type Candidate struct {
	Rel, Episode, EpNum, Agent string
	Info                       Stat
	// Evented: an event named the file since it was last planned, so its
	// content is checked even when its size and time say it is unchanged (a
	// write within the clock tick of the last read).
	Evented bool
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

// Scan is one update's discovery of the agent files (spec §1): the files
// that may have changed, and the files gone. A full scan walks every folder:
// the first update, updates without a watcher, and those after events were
// lost. With a healthy watcher a scan is incremental: it visits only the
// folders and files the watcher's events named since the last update, the
// folders that are not watched (those are polled), and the files no event
// covers (see ChangeSet), so that it costs what changed, not what the run
// holds. Links below the run folder are never followed; one that points
// outside is reported once.
type Scan struct {
	Full     bool
	Removed  map[string]bool // files gone (incremental: a full scan compares what it found with the index)
	Episodes bool            // the root or an episode folder changed

	// The files to plan (a full scan: every agent file), see Folders and
	// Lookup: a full scan keeps them as its visits found them, a folder's a
	// slice (listed), and makes the map by path only when a file is looked
	// up; an incremental scan makes the map at once (found).
	found map[string]Candidate

	d       *Discovery
	log     ScanLog
	fsys    *os.Root // the run folder
	root    string   // its path, for messages
	workers int      // agent folders walked side by side
	cs      ChangeSet
	old     map[string]*dirState // the folder cache before the scan
	dirs    map[string]*dirState // after it (the same map when incremental)
	listed  [][]Candidate        // files the visits found, a folder's a slice (incremental: until indexFound)
	visited map[string]bool      // folders brought up to date
	fresh   map[string]bool      // folders walked with everything below them
	tree    bool                 // folders appeared or went

	// A full scan lists the root and the episodes, then walks the agent
	// folders side by side: their visits take mu to record what they found.
	mu     sync.Mutex
	queued *[]queuedDir // agent folders to walk after the episodes (full scans)
	held   []*walkDir   // their episode folders, open until they are walked
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

// Scan scans the run folder fsys (at root, named in messages) for the
// agent files that may have changed since the last scan, with the changes
// the watcher marked and what a cancelled update left; workers agent
// folders are walked side by side in a full scan.
//
// A folder's listing is cached, keyed by the folder's identity and time: a
// folder whose time did not move (and is not racy, see RacyWindow) holds
// the same entries, since adding, removing or renaming an entry sets the
// time of the folder that holds it. Polling relies on that; events make even
// the folder's stat unneeded.
func (d *Discovery) Scan(fsys *os.Root, root string, workers int, log ScanLog) (*Scan, error) {
	cs := d.Take()
	sc := &Scan{d: d, log: log, fsys: fsys, root: root, workers: workers, cs: cs, old: d.dirs,
		Removed: map[string]bool{}, visited: map[string]bool{}, fresh: map[string]bool{}}
	left := d.left
	d.left = leftover{}
	if len(left.names) > 0 {
		if sc.cs.Names == nil {
			sc.cs.Names = map[string]bool{}
		}
		maps.Copy(sc.cs.Names, left.names)
	}
	maps.Copy(sc.Removed, left.removed)
	sc.Episodes = left.episodes
	var err error
	if !cs.Events || cs.All || sc.old["."] == nil {
		sc.Full, sc.Episodes = true, true
		sc.dirs = make(map[string]*dirState, len(sc.old))
		d.unreadable = map[string]bool{}
		sc.queued = new([]queuedDir)
		if err = sc.visit(nil, ".", ".", fullWalk); err == nil {
			sc.walkQueued()
		}
		sc.closeHeld()
	} else {
		sc.dirs = sc.old
		err = sc.changes()
	}
	if err != nil {
		d.MarkAllDirty()
		return nil, err
	}
	d.dirs = sc.dirs
	if sc.tree || sc.Full {
		folders := make(map[string]uint64, len(sc.dirs))
		for rel, st := range sc.dirs {
			folders[rel] = st.ino
		}
		d.SetFolders(folders)
	}
	return sc, nil
}

// changes is an incremental scan: the folders events named, those not
// watched, and those that could not be read are visited, shallow first;
// then the files events named in folders not visited are given a stat.
func (sc *Scan) changes() error {
	fw := sc.d
	var todo []string
	for _, set := range []map[string]bool{sc.cs.Dirs, sc.cs.Polled, fw.unreadable} {
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
			if p := sc.dirs[Parent(rel)]; p == nil || !contains(p.dirs, rel[strings.LastIndexByte(rel, '/')+1:]) {
				delete(fw.unreadable, rel)
				continue
			}
		}
		m := visitMode{force: sc.cs.Dirs[rel], poll: sc.cs.Polled[rel] || fw.unreadable[rel]}
		if err := sc.visit(nil, "", rel, m); err != nil {
			return err
		}
	}
	sc.indexFound()
	sc.statNamed()
	return nil
}

// indexFound makes the map of the files the visits found, by path, at its
// size: grown entry by entry from empty, the map of a first walk of 100,000
// files was rehashed some 17 times. A later find of the same path replaces
// the earlier.
func (sc *Scan) indexFound() {
	n := 0
	for _, cands := range sc.listed {
		n += len(cands)
	}
	sc.found = make(map[string]Candidate, n)
	for _, cands := range sc.listed {
		for _, c := range cands {
			sc.found[c.Rel] = c
		}
	}
	sc.listed = nil
}

// Len is the number of files the scan found.
func (sc *Scan) Len() int {
	if sc.found != nil {
		return len(sc.found)
	}
	n := 0
	for _, cands := range sc.listed {
		n += len(cands)
	}
	return n
}

// Folders returns the files the scan found, in slices (a full scan's: a
// folder's files each), which the caller may go through side by side and
// does not change. A full scan's planning takes them so, without the map
// by path: at 100,000 files its making was a tenth of a reopen's
// instructions after the walk.
func (sc *Scan) Folders() [][]Candidate {
	if sc.found == nil {
		return sc.listed
	}
	all := make([]Candidate, 0, len(sc.found))
	for _, c := range sc.found {
		all = append(all, c)
	}
	return [][]Candidate{all}
}

// Lookup returns the file the scan found at rel. A full scan's first
// lookup makes the map by path (the caller does not look up from two
// goroutines at once).
func (sc *Scan) Lookup(rel string) (Candidate, bool) {
	if sc.found == nil && sc.listed != nil {
		sc.indexFound()
	}
	c, ok := sc.found[rel]
	return c, ok
}

// Release drops what the scan found, once planned: its candidates (a tenth
// of a first indexing's live heap at 100,000 files) are not kept for the
// collector to mark while the files are read.
func (sc *Scan) Release() {
	sc.found, sc.listed = nil, nil
}

// walkQueued walks the agent folders of a full scan, side by side.
func (sc *Scan) walkQueued() {
	agents := *sc.queued
	sc.queued = nil
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(sc.workers, len(agents)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(agents)); i = next.Add(1) - 1 {
				a := agents[i]
				_ = sc.visit(a.parent, a.name, a.rel, fullWalk) // only the root's visit fails
			}
		}()
	}
	wg.Wait()
}

// queuedDir is an agent folder a full scan walks after the episodes: name
// in its episode's folder, held open (Scan.held) until the walk ends, or
// (parent nil) opened by its path from the run folder.
type queuedDir struct {
	parent    *walkDir
	name, rel string
}

// maxHeld is the most episode folders a full scan holds open for their
// agents' walk: a run of thousands of episodes opens the others' agent
// folders by path, rather than hold a descriptor an episode.
const maxHeld = 256

// closeHeld closes the episode folders held open for the walk.
func (sc *Scan) closeHeld() {
	for _, d := range sc.held {
		d.close()
	}
	sc.held = nil
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
func (sc *Scan) covered(rel string) bool {
	for rel != "." {
		rel = Parent(rel)
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
func (sc *Scan) statNamed() {
	fw := sc.d
	byDir := map[string][]string{}
	add := func(rel string) {
		if _, ok := sc.found[rel]; ok {
			return
		}
		dir := Parent(rel)
		if levelOf(dir) != levelAgent || sc.visited[dir] && !fw.PollFiles[rel] {
			return
		}
		d := sc.dirs[dir]
		if d == nil || !contains(d.files, rel[len(dir)+1:]) {
			delete(fw.PollFiles, rel)
			return
		}
		byDir[dir] = append(byDir[dir], rel)
	}
	for rel := range sc.cs.Names {
		add(rel)
	}
	for rel := range fw.PollFiles {
		add(rel)
	}
	for dir, rels := range byDir {
		r, err := sc.fsys.OpenRoot(dir)
		if err != nil {
			continue // gone or unreadable: the events of that list its parent
		}
		for _, rel := range rels {
			info, err := r.Lstat(rel[len(dir)+1:])
			fw.Stats.Add(1)
			if err == nil && info.Mode().IsRegular() {
				sc.found[rel] = sc.candidate(rel, StatOf(info), sc.cs.Names[rel])
			}
		}
		r.Close()
	}
}

// visit brings folder rel up to date as m says. parent is the opened folder
// that holds it, under name; nil: rel is opened from the run folder (by
// path, confined to it).
func (sc *Scan) visit(parent *walkDir, name, rel string, m visitMode) error {
	var r *walkDir
	var err error
	if parent != nil {
		r, err = parent.openChild(name)
	} else {
		r, err = openWalk(sc.fsys, rel)
	}
	if err != nil {
		if rel == "." {
			return fmt.Errorf("read run folder %s: %w", sc.root, err)
		}
		sc.unlisted(rel, err)
		return nil
	}
	if sc.queued != nil && m.recurse && levelOf(rel) == levelEpisode && len(sc.held) < maxHeld {
		// Its agent folders are walked after the episodes, opened from it.
		sc.held = append(sc.held, r)
	} else {
		defer r.close()
	}
	old := sc.old[rel]
	for attempt := 0; attempt < 2; attempt++ {
		d, infos, err := sc.list(r, rel, m.force || attempt > 0, &m)
		if err != nil {
			if rel == "." {
				return fmt.Errorf("read run folder %s: %w", sc.root, err)
			}
			sc.unlisted(rel, err)
			return nil
		}
		cands, stale := sc.files(r, rel, d, old, infos, m)
		if stale && infos == nil {
			continue // a file went since the cached listing: list it again
		}
		sc.mu.Lock()
		delete(sc.d.unreadable, rel)
		sc.visited[rel] = true
		if m.recurse {
			sc.fresh[rel] = true
		}
		if len(cands) > 0 {
			sc.listed = append(sc.listed, cands)
		}
		if infos != nil {
			if old != nil && !sc.Full {
				sc.diff(rel, old, d)
			}
			if old == nil || !slices.Equal(old.dirs, d.dirs) {
				sc.tree = true
				sc.Episodes = sc.Episodes || levelOf(rel) < levelAgent
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
func (sc *Scan) files(r *walkDir, rel string, d, old *dirState, infos []Stat, m visitMode) (cands []Candidate, stale bool) {
	if levelOf(rel) != levelAgent || len(d.files) == 0 {
		return nil, false
	}
	// What the folder's files share: their episode and agent, and one
	// string holding every path of a walked folder (an allocation a
	// folder, not one a file: a reopen's walk makes 100,000 of them).
	in := sc.folderOf(rel)
	var paths string
	if m.poll {
		n := 0
		for _, f := range d.files {
			n += len(rel) + 1 + len(f)
		}
		var b strings.Builder
		b.Grow(n)
		for _, f := range d.files {
			b.WriteString(rel)
			b.WriteByte('/')
			b.WriteString(f)
		}
		paths = b.String()
		cands = make([]Candidate, 0, len(d.files))
	}
	at := 0
	for i, f := range d.files {
		var frel string
		if m.poll {
			frel = paths[at : at+len(rel)+1+len(f)]
			at += len(frel)
		} else {
			frel = rel + "/" + f
		}
		evented := sc.cs.Names[frel]
		isNew := infos != nil && (old == nil || !contains(old.files, f))
		if !m.poll && !evented && !isNew {
			continue
		}
		var info Stat
		if infos != nil {
			info = infos[i]
		} else { // the cached listing: stat the file
			li, err := r.lstat(f)
			sc.d.Stats.Add(1)
			if err != nil || !li.Mode.IsRegular() {
				return nil, true
			}
			info = li
		}
		cands = append(cands, in.candidate(frel, info, evented))
	}
	return cands, false
}

// subfolders visits the subfolders of a visited folder: each of them when
// m.recurse; otherwise those new in a listing made now, those another folder
// replaced, and those events named, each walked afresh.
func (sc *Scan) subfolders(r *walkDir, rel string, d, old *dirState, listed bool, m visitMode) error {
	for i, sub := range d.dirs {
		srel := sub
		if rel != "." {
			srel = rel + "/" + sub
		}
		if m.recurse {
			if sc.queued != nil && levelOf(rel) == levelEpisode {
				q := queuedDir{name: srel, rel: srel} // opened by path from the run folder
				if len(sc.held) > 0 && sc.held[len(sc.held)-1] == r {
					q.parent, q.name = r, sub
				}
				*sc.queued = append(*sc.queued, q)
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
		if replaced || sc.cs.Names[srel] {
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
func (sc *Scan) diff(rel string, old, d *dirState) {
	for _, f := range old.files {
		if !contains(d.files, f) {
			sc.Removed[rel+"/"+f] = true
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
func (sc *Scan) drop(rel string) {
	d := sc.old[rel]
	if d == nil {
		return
	}
	delete(sc.dirs, rel)
	sc.tree = true
	sc.Episodes = sc.Episodes || levelOf(rel) < levelAgent
	for _, f := range d.files {
		sc.Removed[rel+"/"+f] = true
	}
	for _, s := range d.dirs {
		sc.drop(rel + "/" + s)
	}
}

// unlisted handles a folder that could not be opened or listed: gone (or no
// longer a folder) since its parent was listed, or unreadable, which is
// logged once and tried again at each update. Its files are dropped.
func (sc *Scan) unlisted(rel string, err error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.drop(rel)
	sc.visited[rel] = true
	fw := sc.d
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		delete(fw.unreadable, rel)
		return
	}
	sc.log.Warn("folder:"+rel, "cannot read folder", zap.String("folder", rel), zap.Error(err))
	if !fw.unreadable[rel] {
		fw.unreadable[rel] = true
		sc.Episodes = sc.Episodes || levelOf(rel) < levelAgent
	}
}

// ChangedEpisodes returns the run's episode folders when the scan listed
// them and committed says they differ from the committed ones (nil:
// nothing to commit).
func (sc *Scan) ChangedEpisodes(committed func(episodes map[string]bool) bool) map[string]bool {
	if !sc.Episodes {
		return nil
	}
	episodes := sc.episodeSet()
	if committed(episodes) {
		return nil
	}
	return episodes
}

// episodeSet lists the episode folders: those listed, and those that exist
// but cannot be read.
func (sc *Scan) episodeSet() map[string]bool {
	eps := map[string]bool{}
	if root := sc.dirs["."]; root != nil {
		for _, ep := range root.dirs {
			if sc.dirs[ep] != nil || sc.d.unreadable[ep] {
				eps[ep] = true
			}
		}
	}
	return eps
}

func (sc *Scan) candidate(rel string, info Stat, evented bool) Candidate {
	return sc.folderOf(Parent(rel)).candidate(rel, info, evented)
}

// folderNames is what the files of an agent folder (or one below it)
// share in their candidates.
type folderNames struct{ episode, epNum, agent string }

// folderOf returns the episode and agent of agent folder rel (or one below
// it).
func (sc *Scan) folderOf(rel string) folderNames {
	ep, rest, _ := strings.Cut(rel, "/")
	agent, _, _ := strings.Cut(rest, "/")
	num, _ := EpisodeNumber(ep)
	return folderNames{ep, num, agent}
}

func (in folderNames) candidate(rel string, info Stat, evented bool) Candidate {
	return Candidate{Rel: rel, Episode: in.episode, EpNum: in.epNum, Agent: in.agent, Info: info, Evented: evented}
}
