package retriever

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
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
// they appear, and updates the index shortly after a burst of events. Folders
// that cannot be watched (the inotify watch limit reached, or a file system
// without events) are polled instead, which is logged once. While it runs, an
// update lists again only the folders that changed; each file is still given a
// stat, so a search never misses a change to a file made before it was asked.
// Watch returns nil when ctx ends; only one Watch runs at a time.
func (ix *Index) Watch(ctx context.Context, onChange func(Changes)) error {
	if onChange != nil {
		defer ix.subscribe(onChange)()
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
		ix.warnOnce("watch:poll", "file-system events are not available: polling the run folder instead",
			zap.Duration("every", pollInterval), zap.Error(err))
		ix.fw.markAllDirty()
		return ix.poll(ctx)
	}
	wt := &watcher{ix: ix, w: w, watched: map[string]uint64{}, unwatched: map[string]bool{}}
	defer w.Close()

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
	var poll *time.Ticker
	var pollC <-chan time.Time
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	update := func() {
		pending = false
		timer.Stop()
		if _, err := ix.Refresh(ctx, nil); err != nil && ctx.Err() == nil {
			ix.warnOnce("watch:refresh", "updating the index failed; it is tried again at the next change", zap.Error(err))
		}
	}

	// The first update lists every folder; the loop then watches the folders
	// it found (see sync) and updates again to catch what changed in between.
	update()
	events, errs := w.Events, w.Errors
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if wt.event(ev) {
				schedule()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				ix.warnOnce("watch:error", "file-system events failed; the run folder is listed again", zap.Error(err))
			}
			ix.fw.markAllDirty()
			schedule()
		case <-ix.fw.kick:
			if wt.sync() {
				schedule()
			}
			if len(wt.unwatched) > 0 && poll == nil {
				poll = time.NewTicker(pollInterval)
				pollC = poll.C
			} else if len(wt.unwatched) == 0 && poll != nil {
				poll.Stop()
				poll, pollC = nil, nil
			}
		case <-timer.C:
			update()
		case <-pollC:
			update()
		}
		if events == nil && errs == nil {
			// The watcher stopped on its own: poll from now on.
			ix.warnOnce("watch:poll", "file-system events stopped: polling the run folder instead", zap.Duration("every", pollInterval))
			ix.fw.stop()
			ix.fw.markAllDirty()
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
			if _, err := ix.Refresh(ctx, nil); err != nil && ctx.Err() == nil {
				ix.warnOnce("watch:refresh", "updating the index failed; it is tried again", zap.Error(err))
			}
		}
	}
}

// subscribe adds fn to the functions told of changes; the returned function
// removes it.
func (ix *Index) subscribe(fn func(Changes)) func() {
	ix.subsMu.Lock()
	defer ix.subsMu.Unlock()
	h := &fn
	ix.subs = append(ix.subs, h)
	return func() {
		ix.subsMu.Lock()
		defer ix.subsMu.Unlock()
		for i, s := range ix.subs {
			if s == h {
				ix.subs = append(ix.subs[:i:i], ix.subs[i+1:]...)
				return
			}
		}
	}
}

func (ix *Index) notify(c Changes) {
	if len(c.Files) == 0 {
		return
	}
	ix.subsMu.Lock()
	subs := append([]*func(Changes){}, ix.subs...)
	ix.subsMu.Unlock()
	for _, fn := range subs {
		(*fn)(c)
	}
}

// followState is what the folder walk keeps between updates and what the
// watcher tells it. dirs is read and written by discover only, under
// refreshMu; the rest is under mu.
type followState struct {
	dirs map[string]*dirState // by slash path relative to the root, "." the root

	mu       sync.Mutex
	watching bool
	watched  map[string]uint64 // folders under watch, with the inode watched
	dirty    map[string]bool   // folders with events since they were listed
	allDirty bool              // events were lost: list every folder
	folders  map[string]uint64 // the folders of the last walk, with their inodes
	kick     chan struct{}     // tells the watcher that the folders changed

	listings atomic.Int64 // folders listed (read) by walks, for tests

	// hooks for tests; set before the index is used
	beforeRead  func(rel string)
	beforeBlock func(rel string, pos int64) error // an error fails the block's read
	newWatcher  func() (*fsnotify.Watcher, error)
	addWatch    func(w *fsnotify.Watcher, path string) error
}

func (f *followState) start() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watching {
		return false
	}
	f.watching = true
	f.watched = map[string]uint64{}
	f.dirty = map[string]bool{}
	f.kick = make(chan struct{}, 1)
	return true
}

func (f *followState) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watching = false
	f.watched = nil
	f.dirty = nil
}

func (f *followState) takeAllDirty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := f.allDirty
	f.allDirty = false
	return all
}

func (f *followState) markAllDirty() {
	f.mu.Lock()
	f.allDirty = true
	f.mu.Unlock()
}

// clean reports whether a folder (its inode ino) is watched and had no event
// since it was last listed. A folder that is not clean is listed now, which
// consumes its events: an event that comes later marks it again.
func (f *followState) clean(rel string, ino uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.watching {
		return false
	}
	dirty := f.dirty[rel]
	delete(f.dirty, rel)
	w, ok := f.watched[rel]
	return ok && w == ino && !dirty
}

// setFolders records the folders a walk found, and tells a running watcher
// when some are not watched yet (or no longer exist).
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
	same := len(f.watched) == len(folders)
	for rel, ino := range folders {
		if w, ok := f.watched[rel]; !ok || w != ino {
			same = false
			break
		}
	}
	if !same {
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
}

// watcher is a running Watch's fsnotify watcher and what it watches.
type watcher struct {
	ix        *Index
	w         *fsnotify.Watcher
	watched   map[string]uint64 // by rel, the inode watched
	unwatched map[string]bool   // folders that could not be watched: polled
}

// event marks the folders an event may have changed the listing of, and
// reports whether the index may need an update.
func (wt *watcher) event(ev fsnotify.Event) bool {
	rel, ok := wt.rel(ev.Name)
	if !ok {
		return false
	}
	if ev.Op&^fsnotify.Write == 0 {
		return true // a file grew or changed: its stat tells
	}
	f := &wt.ix.fw
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dirty == nil {
		return true
	}
	f.dirty[rel] = true
	if rel != "." {
		f.dirty[parentOf(rel)] = true
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched folder that went away (or moved) loses its watch: the next
		// sync watches what is at its path now.
		if _, ok := f.watched[rel]; ok {
			delete(f.watched, rel)
			delete(wt.watched, rel)
			_ = wt.w.Remove(ev.Name) // the kernel may have dropped it already
		}
	}
	return true
}

// sync watches the folders of the last walk that are not watched yet and
// stops watching those that are gone. It reports whether it added watches:
// the folders newly watched are marked, so the next update lists them again
// and finds what changed in them before their watch began.
func (wt *watcher) sync() bool {
	f := &wt.ix.fw
	f.mu.Lock()
	folders := f.folders
	f.mu.Unlock()
	add := wt.ix.fw.addWatch
	if add == nil {
		add = func(w *fsnotify.Watcher, path string) error { return w.Add(path) }
	}
	var added []string
	var failed []string
	var firstErr error
	for rel, ino := range folders {
		if w, ok := wt.watched[rel]; ok && w == ino {
			continue
		}
		if err := add(wt.w, wt.ix.abs(rel)); err != nil {
			if !wt.unwatched[rel] {
				failed = append(failed, rel)
				if firstErr == nil {
					firstErr = err
				}
			}
			wt.unwatched[rel] = true
			delete(wt.watched, rel)
			continue
		}
		delete(wt.unwatched, rel)
		wt.watched[rel] = ino
		added = append(added, rel)
	}
	for rel := range wt.watched {
		if _, ok := folders[rel]; !ok {
			delete(wt.watched, rel)
			_ = wt.w.Remove(wt.ix.abs(rel)) // usually gone with its folder
		}
	}
	for rel := range wt.unwatched {
		if _, ok := folders[rel]; !ok {
			delete(wt.unwatched, rel)
		}
	}
	f.mu.Lock()
	f.watched = make(map[string]uint64, len(wt.watched))
	for rel, ino := range wt.watched {
		f.watched[rel] = ino
	}
	for _, rel := range added {
		f.dirty[rel] = true
	}
	f.mu.Unlock()
	if len(failed) > 0 {
		msg := "cannot watch folders of the run for changes: polling them instead"
		fields := []zap.Field{zap.String("folder", failed[0]), zap.Int("folders", len(failed)),
			zap.Duration("every", pollInterval), zap.Error(firstErr)}
		if errors.Is(firstErr, syscall.ENOSPC) {
			fields = append(fields, zap.String("hint", "the inotify watch limit is reached: raise fs.inotify.max_user_watches"))
		}
		wt.ix.warnOnce("watch:poll", msg, fields...)
	}
	return len(added) > 0
}

// rel returns the slash path of name relative to the run folder.
func (wt *watcher) rel(name string) (string, bool) {
	root := wt.ix.root
	name = filepath.Clean(name)
	if name == root {
		return ".", true
	}
	r, ok := strings.CutPrefix(name, root+string(os.PathSeparator))
	if !ok {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func parentOf(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "."
	}
	return rel[:i]
}
