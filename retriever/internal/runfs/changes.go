package runfs

// This file holds what the watcher's events tell the updates (spec §7): the
// folders under watch and those polled, the paths events marked since the
// last update, and the barrier while events are healthy. The retriever's
// watcher (its watcher.go) records its events here and discovery
// (discover.go) takes them, with what it makes of them.

import (
	"maps"
	"strings"
	"sync"
)

// Events is the watcher's view of the run folder, shared by the watcher's
// goroutine and the updates: everything under its own lock.
type Events struct {
	mu         sync.Mutex
	watching   bool
	bar        *Barrier          // set while events are healthy
	probe      *Probe            // set while the watcher has one (probe.go)
	watched    map[string]uint64 // folders under watch, with the inode watched
	folders    map[string]uint64 // the folders of the last update, with their inodes
	polled     map[string]bool   // folders of the last update that are not watched
	allDirty   bool
	dirtyDirs  map[string]bool
	dirtyNames map[string]bool
	adder      func(rel string, ino uint64) error // watches a folder; nil: no watcher
	unwatch    func(rel string)                   // drops a folder's watch (the adder's)
	kick       chan struct{}                      // tells the watcher that the folders changed
	// polledFiles is how many files the last update polled.
	polledFiles int
	// unsettled: the last update left folders that could not be read, or
	// files a cancellation left undone (Discovery.Settle).
	unsettled bool
	// taken: a change set was taken (Take) by an update not yet ended
	// (Discovery.Settle): what it holds may not be committed yet.
	taken bool
	// drops counts the events that dropped watches (Event, gone), or that
	// named a folder whose watch is being added or one above it (adding):
	// a watch added meanwhile may be one of those dropped, or of a folder
	// moved or removed since its add began (Watch).
	drops  uint64
	adding map[string]int // folders whose watch Watch is adding
}

// ChangeSet is what an incremental update looks at, taken from the watcher's
// events since the last update (or the whole run folder, when all is set or
// events are off). An event that names a path marks it (Names): a file
// written, or a file or folder created, removed, renamed or changed in its
// attributes; any event but a write also marks the folder that holds the path
// (Dirs), whose listing it may have changed. A folder that is not watched is
// polled at every update (Polled).
type ChangeSet struct {
	Events bool // a healthy watcher and barrier: the rest is valid
	All    bool // events were lost: walk every folder
	Dirs   map[string]bool
	Names  map[string]bool
	Polled map[string]bool
}

func (f *Events) Start() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watching {
		return false
	}
	f.watching = true
	f.watched = map[string]uint64{}
	f.kick = make(chan struct{}, 1)
	f.updatePolled()
	return true
}

func (f *Events) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watching = false
	f.bar = nil
	f.probe = nil
	f.adder, f.unwatch = nil, nil
	f.watched = nil
	f.polled = nil
	f.dirtyDirs, f.dirtyNames = nil, nil
}

// Empty reports whether no update found the run's folders yet.
func (f *Events) Empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.folders == nil
}

// SetAdder gives Watch the watcher's add of a folder's watch, and the
// unwatch that drops one (both its own and the probe's).
func (f *Events) SetAdder(add func(rel string, ino uint64) error, unwatch func(rel string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adder, f.unwatch = add, unwatch
}

// Watch makes sure a running watcher watches folder rel at inode ino, and
// reports whether it began to now: then what changed in the folder before
// is polled by the caller. A folder that cannot be watched stays polled.
//
// A folder watched at rel before, at another inode (moved away, and
// another made at its path), loses its watch first, with every folder
// sharing it (unwatchLocked): fsnotify keeps one watch a path and one a
// descriptor, so a folder moved to a path listed before its old one
// (B, when A was moved to B and a new A made) got A's watch back at its
// own add and no path of its own, and the new A's add then took that
// watch's path away: B's events were dropped for good while B was still
// counted as watched. Dropped first, B is polled until an update watches
// it afresh.
//
// An event taken while the watch is added may have dropped it, or made it
// a watch of another folder than the one listed: a removal that dropped
// watches (the folder that was at rel before, after the update listed the
// one there now: the watcher's watch by its path, the probe's by rel, go
// with it), or a removal or move of rel or of a folder above it (the
// folder listed is not at rel any more; the probe's add may have failed
// on it and its event been taken before this watch was counted). Then the
// watch just added is dropped again (counted nowhere, nothing else would
// drop it: the folder leaving the run would leave the watcher marking
// paths gone and the probe never quiet), the folder is not counted as
// watched, and it stays polled until an update watches it again.
func (f *Events) Watch(rel string, ino uint64) bool {
	f.mu.Lock()
	add, unwatch := f.adder, f.unwatch
	old, ok := f.watched[rel]
	if add == nil || !f.watching || ok && old == ino {
		f.mu.Unlock()
		return false
	}
	if ok {
		f.unwatchLocked(rel, unwatch)
	}
	drops := f.drops
	if f.adding == nil {
		f.adding = map[string]int{}
	}
	f.adding[rel]++
	f.mu.Unlock()
	err := add(rel, ino)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.adding[rel]--; f.adding[rel] == 0 {
		delete(f.adding, rel)
	}
	if err != nil || f.watched == nil {
		return false // not watched, or the watcher stopped meanwhile (and closed its watches)
	}
	if f.drops != drops {
		unwatch(rel) // counted nowhere, it would never be dropped
		return false
	}
	f.watched[rel] = ino
	delete(f.polled, rel)
	return true
}

func (f *Events) SetBarrier(b *Barrier) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bar = b
}

// SetProbe gives the watcher's change probe (nil: none) to Quiet.
func (f *Events) SetProbe(p *Probe) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.probe = p
}

// Quiet reports whether the committed state already holds every change
// made before the call, so that a search may answer from it without the
// barrier b and an update (see Probe for why): b is the current barrier,
// no change set is pending or taken by an update under way, nothing is
// polled or left to retry, and the probe got no event since its last
// drain, with no slow pass in flight. The caller checks that the first
// index is complete.
func (f *Events) Quiet(b *Barrier) bool {
	f.mu.Lock()
	p := f.probe
	pending := b == nil || f.bar != b || p == nil || f.folders == nil || f.taken || f.allDirty ||
		len(f.dirtyDirs) > 0 || len(f.dirtyNames) > 0 || len(f.polled) > 0 || f.polledFiles > 0 || f.unsettled
	f.mu.Unlock()
	// The barrier's lock is taken apart: its giveUp marks the change set
	// under it (b.mu, then f.mu).
	return !pending && b.healthy() && p.Quiet()
}

// A Pass is a search's slow pass (the barrier, then an update) as the
// probe counts it: what its drain took, its update covers once it returns.
type Pass struct {
	p *Probe
	t uint64
}

// BeginPass starts a slow pass: the probe's queue is drained, its events
// now the pass's to cover. End tells whether the pass's update returned.
func (f *Events) BeginPass() Pass {
	f.mu.Lock()
	p := f.probe
	f.mu.Unlock()
	return Pass{p, p.Begin()}
}

// End ends the pass (with the probe it began on, were another watcher's
// probe set since); ok says that its update returned.
func (ps Pass) End(ok bool) { ps.p.End(ps.t, ok) }

func (f *Events) CurrentBarrier() *Barrier {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bar
}

// NoEvents says that events stopped: every update walks every folder.
func (f *Events) NoEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bar = nil
	f.allDirty = true
}

func (f *Events) MarkAllDirty() {
	f.mu.Lock()
	f.allDirty = true
	f.mu.Unlock()
}

// Polling reports whether some folders or files are polled.
func (f *Events) Polling() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.polled) > 0 || f.polledFiles > 0
}

// Take returns the changes since the last take and starts a new set.
func (f *Events) Take() ChangeSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs := ChangeSet{Events: f.bar != nil, All: f.allDirty, Dirs: f.dirtyDirs, Names: f.dirtyNames}
	f.taken = true
	if len(f.polled) > 0 {
		cs.Polled = maps.Clone(f.polled)
	}
	f.allDirty = false
	f.dirtyDirs, f.dirtyNames = nil, nil
	return cs
}

// mark records an event that names rel; listing tells whether it may have
// changed the listing of the folder that holds rel. Under mu.
func (f *Events) mark(rel string, listing bool) {
	if f.dirtyNames == nil {
		f.dirtyNames = map[string]bool{}
	}
	f.dirtyNames[rel] = true
	if !listing {
		return
	}
	if f.dirtyDirs == nil {
		f.dirtyDirs = map[string]bool{}
	}
	f.dirtyDirs[Parent(rel)] = true
	if rel == "." {
		f.dirtyDirs["."] = true
	}
}

// SetFolders records the folders an update found (by slash path, with
// their inodes), and tells a running
// watcher that they changed.
func (f *Events) SetFolders(folders map[string]uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.folders = folders
	if !f.watching {
		return
	}
	f.updatePolled()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// updatePolled lists the folders of the last update that are not watched
// (or watched at another inode). Under mu.
func (f *Events) updatePolled() {
	f.polled = map[string]bool{}
	for rel, ino := range f.folders {
		if w, ok := f.watched[rel]; !ok || w != ino {
			f.polled[rel] = true
		}
	}
}

// Parent is the slash path of the folder that holds rel (".": the run
// folder).
func Parent(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "."
	}
	return rel[:i]
}

// Event records an event that names rel, and reports whether the index may
// need an update; listing tells whether it may have changed the listing of
// the folder that holds rel, gone that rel went away or moved: then a
// watched folder at or below it loses its watch (unwatch is called for
// it), since the system would report what happens in a moved folder under
// its old path, and it is polled until the next update watches what is at
// its path now.
func (f *Events) Event(rel string, listing, gone bool, unwatch func(rel string)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.watching {
		return true
	}
	f.mark(rel, listing)
	if !gone {
		return true
	}
	for a := range f.adding {
		if a == rel || rel == "." || strings.HasPrefix(a, rel+"/") {
			f.drops++ // see Watch
			break
		}
	}
	for w := range f.watched {
		if w == rel || rel == "." || strings.HasPrefix(w, rel+"/") {
			f.unwatchLocked(w, unwatch)
		}
	}
	return true
}

// unwatchLocked drops folder w's watch, and the watch of every other
// folder watched at the same inode: the system keeps one watch an inode,
// which the watch of a moved folder's new path reuses (fsnotify then
// reports it under the old path) and the old path's removal drops with it.
// A folder of the last update whose watch went is polled until an update
// watches it again. Under mu.
func (f *Events) unwatchLocked(w string, unwatch func(rel string)) {
	ino, ok := f.watched[w]
	if !ok {
		return
	}
	f.drops++
	for o, i := range f.watched {
		if o != w && i != ino {
			continue
		}
		delete(f.watched, o)
		unwatch(o)
		if _, ok := f.folders[o]; ok && f.polled != nil {
			f.polled[o] = true
		}
	}
}

// Sync stops watching the folders that left the run folder or were
// replaced (unwatch is called for each): a folder moved keeps its watch,
// an inode's, under its old path, which a watch of its new path would
// reuse, reporting its events there.
func (f *Events) Sync(unwatch func(rel string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for rel, ino := range f.watched {
		if f.folders[rel] != ino {
			f.unwatchLocked(rel, unwatch)
		}
	}
}

// Kick is told when the folders of an update changed while watching.
func (f *Events) Kick() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kick
}

// settle records, at an update's end, how many files it left polled and
// whether folders could not be read or work was left undone; the change
// set it took is spent.
func (f *Events) settle(polledFiles int, unsettled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polledFiles, f.unsettled, f.taken = polledFiles, unsettled, false
}

// Counts are the folders of the last update, those watched and those
// polled, and whether a barrier is set: what tests wait for.
func (f *Events) Counts() (folders, watched, polled int, barrier bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.folders), len(f.watched), len(f.polled), f.bar != nil
}

// IsWatched reports whether folder rel is under watch.
func (f *Events) IsWatched(rel string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.watched[rel]
	return ok
}
