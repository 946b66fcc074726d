package retriever

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

const (
	// debounce is how long the watcher waits after an event for more before it
	// updates the index, and maxDelay the longest it puts an update off while
	// events keep coming.
	debounce = 75 * time.Millisecond
	maxDelay = 500 * time.Millisecond
	// pollInterval is how often folders that cannot be watched are polled.
	pollInterval = 500 * time.Millisecond
)

// Watch keeps the index current until ctx ends, calling onChange with the
// record files whose diagnostics may have changed, whichever update (a search's
// or the watcher's) found the change. It watches the run folder, its episode
// folders and its agent folders at every depth with fsnotify, adds folders as
// they appear, and updates the index shortly after a burst of events.
//
// While it runs, an update costs what changed: it looks only at the folders
// and files the events named (see changeSet), and a search waits, before it
// updates, for every event queued before it was asked (see barrier), so it
// still never misses a change made before it. Folders that cannot be watched
// (the inotify watch limit reached, a network file system) are polled
// instead, which is logged once: their files are given a stat at each update
// and every pollInterval. When events fail (the watcher stops, the kernel's
// queue overflows) the next update walks the whole run folder, and if the
// watcher stopped every update does from then on.
//
// Watch returns nil when ctx ends; only one Watch runs at a time.
func (ix *Index) Watch(ctx context.Context, onChange func(Changes)) error {
	if onChange != nil {
		defer ix.subs.add(onChange)()
	}
	if !ix.fw.start() {
		return errors.New("watch: the index is already watched")
	}
	defer ix.fw.stop()

	newWatcher := ix.fw.newWatcher
	if newWatcher == nil {
		newWatcher = func() (*fsnotify.Watcher, error) { return fsnotify.NewBufferedWatcher(4096) }
	}
	w, err := newWatcher()
	if err != nil {
		ix.once.warn("watch:poll", "file-system events are not available: polling the run folder instead",
			zap.Duration("every", pollInterval), zap.Error(err))
		return ix.poll(ctx)
	}
	defer w.Close()

	// Updates run apart from the loop, so that the loop keeps reading events
	// (a barrier waits for the loop, not for an update).
	trigger := make(chan struct{}, 1)
	kick := func() {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	var updater sync.WaitGroup
	updater.Add(1)
	go func() {
		defer updater.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-trigger:
			}
			if _, err := ix.update(ctx, nil); err != nil && ctx.Err() == nil {
				ix.once.warn("watch:refresh", "updating the index failed; it is tried again at the next change", zap.Error(err))
			}
		}
	}()
	defer updater.Wait()

	wt := &watcher{ix: ix, w: w}
	// From now on an update watches each folder it visits before it lists
	// it, so that what changes after the listing raises an event; the
	// folders of earlier updates are polled (their changes since were not
	// watched) until an update visits them and watches them.
	ix.fw.setAdder(wt.add)
	if ix.fw.empty() {
		// Nothing was indexed yet: the folders to watch are found first.
		if _, err := ix.update(ctx, nil); err != nil && ctx.Err() == nil {
			ix.once.warn("watch:refresh", "updating the index failed; it is tried again at the next change", zap.Error(err))
		}
	}
	bar, err := runfs.NewBarrier(ix.root, w, ix.fw.markAllDirty)
	if err != nil {
		ix.once.warn("watch:barrier", "searches list the run folder: no private folder for the watcher's barrier", zap.Error(err))
	} else {
		defer bar.Close()
		ix.fw.setBarrier(bar)
	}
	kick()

	return wt.loop(ctx, bar, kick)
}

// loop is Watch's event loop: it records each event in the change set and
// schedules an update (kick) once the events pause, hands the barrier's
// events to it, polls the folders that are polled, and falls back to
// polling the run folder when the events stop.
func (wt *watcher) loop(ctx context.Context, bar *runfs.Barrier, kick func()) error {
	ix := wt.ix
	var timer = time.NewTimer(time.Hour)
	timer.Stop()
	pending := false
	var burst time.Time
	schedule := func() {
		now := time.Now()
		if !pending {
			pending, burst = true, now
		}
		timer.Reset(max(0, min(debounce, burst.Add(maxDelay).Sub(now))))
	}
	poll := time.NewTicker(pollInterval)
	defer poll.Stop()

	events, errs := wt.w.Events, wt.w.Errors
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				break
			}
			if bar != nil && ev.Name == bar.Path() {
				bar.Arrived()
				break
			}
			if wt.event(ev) {
				schedule()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				break
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				ix.once.warn("watch:error", "file-system events failed; the run folder is listed again", zap.Error(err))
			}
			// Events were lost, perhaps a barrier's too: the next update walks
			// every folder, which is what the searches waiting need.
			ix.fw.markAllDirty()
			if bar != nil {
				bar.Lost()
			}
			schedule()
		case <-ix.fw.kick:
			wt.sync()
		case <-timer.C:
			pending = false
			kick()
		case <-poll.C:
			if ix.fw.polling() {
				kick()
			}
		}
		if events == nil && errs == nil {
			// The watcher stopped on its own: poll from now on.
			ix.once.warn("watch:poll", "file-system events stopped: polling the run folder instead", zap.Duration("every", pollInterval))
			ix.fw.noEvents()
			if bar != nil {
				bar.Lost()
			}
			return ix.poll(ctx)
		}
	}
}

// poll updates the index every pollInterval until ctx ends.
func (ix *Index) poll(ctx context.Context) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := ix.update(ctx, nil); err != nil && ctx.Err() == nil {
				ix.once.warn("watch:refresh", "updating the index failed; it is tried again", zap.Error(err))
			}
		}
	}
}

// awaitEvents makes the next update see every change made before the call:
// with a healthy watcher it waits until the watcher has read every event the
// kernel queued before now (see runfs.Barrier). When that cannot be known
// (the barrier failed or is late), the next update walks every folder
// instead; log tells so.
func (f *followState) awaitEvents(ctx context.Context, log *zap.Logger) error {
	return f.askEvents(f.currentBarrier(), log).await(ctx)
}

// askedEvents is awaitEvents in two halves: askEvents writes to the barrier
// (events queued before it was called are then ahead of its event), await
// waits for its event. Work done in between runs while the event is on its
// way to the watcher's loop.
type askedEvents struct {
	fw     *followState
	log    *zap.Logger
	b      *runfs.Barrier // nil: no events, the update walks every folder
	target uint64
	err    error
}

func (f *followState) askEvents(b *runfs.Barrier, log *zap.Logger) askedEvents {
	a := askedEvents{fw: f, log: log, b: b}
	if b != nil {
		a.target, a.err = b.Ask()
	}
	return a
}

func (a askedEvents) await(ctx context.Context) error {
	if a.b == nil {
		return nil
	}
	err := a.err
	if err == nil {
		err = a.b.Await(ctx, a.target, runfs.BarrierTimeout)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	a.fw.markAllDirty()
	a.log.Info("the watcher's events are late or lost: this update walks the run folder", zap.Error(err))
	return nil
}

// freshIfWatched brings the index up to date before a request that reads a
// record file's table (Outline, RecordAt) when a healthy watcher makes that
// cheap: the barrier, then an update of what its events named, no walk. So
// documentSymbol and hover sent right after an append see it. Without a
// watcher the table is read as the last update left it (the watcher's or the
// next search's): a walk per request is what issue 13 took away.
func (ix *Index) freshIfWatched(ctx context.Context) error {
	if ix.fw.currentBarrier() == nil {
		return nil
	}
	_, err := ix.Refresh(ctx, nil)
	return err
}

// subscribers are the functions told of the changes an update commits.
type subscribers struct {
	mu   sync.Mutex
	subs []*func(Changes)
}

// add adds fn to the functions told of changes; the returned function
// removes it.
func (ss *subscribers) add(fn func(Changes)) func() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	h := &fn
	ss.subs = append(ss.subs, h)
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		for i, s := range ss.subs {
			if s == h {
				ss.subs = append(ss.subs[:i:i], ss.subs[i+1:]...)
				return
			}
		}
	}
}

// notify tells every function added of c, when it changed a file.
func (ss *subscribers) notify(c Changes) {
	if len(c.Files) == 0 {
		return
	}
	ss.mu.Lock()
	subs := append([]*func(Changes){}, ss.subs...)
	ss.mu.Unlock()
	for _, fn := range subs {
		(*fn)(c)
	}
}

// changeSet is what an incremental update looks at, taken from the watcher's
// events since the last update (or the whole run folder, when all is set or
// events are off). An event that names a path marks it (names): a file
// written, or a file or folder created, removed, renamed or changed in its
// attributes; any event but a write also marks the folder that holds the path
// (dirs), whose listing it may have changed. A folder that is not watched is
// polled at every update (polled).
type changeSet struct {
	events bool // a healthy watcher and barrier: the rest is valid
	all    bool // events were lost: walk every folder
	dirs   map[string]bool
	names  map[string]bool
	polled map[string]bool
}

// leftover is what a cancelled update found and did not do: files to plan,
// files to drop, and whether the episodes changed.
type leftover struct {
	names, removed map[string]bool
	episodes       bool
}

// leave keeps what a cancelled update did not do for the next one.
// Under refreshMu.
func (f *followState) leave(files []string, removed []*corpus.File, episodes bool) {
	if f.left.names == nil {
		f.left.names, f.left.removed = map[string]bool{}, map[string]bool{}
	}
	for _, rel := range files {
		f.left.names[rel] = true
	}
	for _, fs := range removed {
		f.left.removed[fs.Rel] = true
	}
	f.left.episodes = f.left.episodes || episodes
}

// followState is what discovery keeps between updates and what the watcher
// tells it. dirs, unreadable and pollFiles are read and written by updates
// only, under refreshMu; the rest is under mu.
type followState struct {
	dirs       map[string]*dirState // by slash path relative to the root, "." the root
	unreadable map[string]bool      // folders that exist but cannot be read: tried at each update
	pollFiles  map[string]bool      // files no event covers (hard links, failed reads): a stat at each update
	left       leftover             // what a cancelled update did not do

	mu         sync.Mutex
	watching   bool
	bar        *runfs.Barrier    // set while events are healthy
	watched    map[string]uint64 // folders under watch, with the inode watched
	folders    map[string]uint64 // the folders of the last update, with their inodes
	polled     map[string]bool   // folders of the last update that are not watched
	allDirty   bool
	dirtyDirs  map[string]bool
	dirtyNames map[string]bool
	adder      func(rel string, ino uint64) error // watches a folder; nil: no watcher
	kick       chan struct{}                      // tells the watcher that the folders changed
	// polledFiles is len(pollFiles) after the last update.
	polledFiles int

	listings atomic.Int64 // folders listed (read) by updates, for tests
	stats    atomic.Int64 // stats of files and folders by updates, for tests

	// hooks for tests; set before the index is used
	beforeRead  func(rel string)
	beforeBlock func(rel string, pos int64) error // an error fails the block's read
	newWatcher  func() (*fsnotify.Watcher, error)
	addWatch    func(w *fsnotify.Watcher, path string) error
	listed      func(rel string) // a folder was listed
}

func (f *followState) start() bool {
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

func (f *followState) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watching = false
	f.bar = nil
	f.adder = nil
	f.watched = nil
	f.polled = nil
	f.dirtyDirs, f.dirtyNames = nil, nil
}

// empty reports whether no update found the run's folders yet.
func (f *followState) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.folders == nil
}

func (f *followState) setAdder(add func(rel string, ino uint64) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adder = add
}

// watch makes sure a running watcher watches folder rel at inode ino, and
// reports whether it began to now: then what changed in the folder before
// is polled by the caller. A folder that cannot be watched stays polled.
func (f *followState) watch(rel string, ino uint64) bool {
	f.mu.Lock()
	add := f.adder
	if add == nil || !f.watching || f.watched[rel] == ino {
		f.mu.Unlock()
		return false
	}
	f.mu.Unlock()
	if add(rel, ino) != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watched == nil {
		return false // the watcher stopped meanwhile
	}
	f.watched[rel] = ino
	delete(f.polled, rel)
	return true
}

func (f *followState) setBarrier(b *runfs.Barrier) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bar = b
}

func (f *followState) currentBarrier() *runfs.Barrier {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bar
}

// noEvents says that events stopped: every update walks every folder.
func (f *followState) noEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bar = nil
	f.allDirty = true
}

func (f *followState) markAllDirty() {
	f.mu.Lock()
	f.allDirty = true
	f.mu.Unlock()
}

// polling reports whether some folders or files are polled.
func (f *followState) polling() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.polled) > 0 || f.polledFiles > 0
}

// take returns the changes since the last take and starts a new set.
func (f *followState) take() changeSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs := changeSet{events: f.bar != nil, all: f.allDirty, dirs: f.dirtyDirs, names: f.dirtyNames}
	if len(f.polled) > 0 {
		cs.polled = maps.Clone(f.polled)
	}
	f.allDirty = false
	f.dirtyDirs, f.dirtyNames = nil, nil
	return cs
}

// mark records an event that names rel; listing tells whether it may have
// changed the listing of the folder that holds rel. Under mu.
func (f *followState) mark(rel string, listing bool) {
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
	f.dirtyDirs[parentOf(rel)] = true
	if rel == "." {
		f.dirtyDirs["."] = true
	}
}

// setFolders records the folders an update found, and tells a running
// watcher that they changed.
func (f *followState) setFolders(dirs map[string]*dirState) {
	folders := make(map[string]uint64, len(dirs))
	for rel, d := range dirs {
		folders[rel] = d.ino
	}
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
func (f *followState) updatePolled() {
	f.polled = map[string]bool{}
	for rel, ino := range f.folders {
		if w, ok := f.watched[rel]; !ok || w != ino {
			f.polled[rel] = true
		}
	}
}
