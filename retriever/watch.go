package retriever

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"runls/retriever/internal/persist"
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
// and files the events named (see runfs.ChangeSet), and a search waits, before it
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
	if !ix.fw.Start() {
		return errors.New("watch: the index is already watched")
	}
	defer ix.fw.Stop()

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
		for first := true; ; first = false {
			select {
			case <-ctx.Done():
				return
			case <-trigger:
			}
			if _, err := ix.update(ctx, nil); err != nil && ctx.Err() == nil {
				ix.once.warn("watch:refresh", "updating the index failed; it is tried again at the next change", zap.Error(err))
			}
			if first {
				ix.releaseWatched()
			}
		}
	}()
	defer updater.Wait()

	// The change probe (runfs.Probe) watches each folder before the watcher
	// does: without one, every search takes the barrier's path.
	probe, err := runfs.NewProbe()
	if err != nil {
		ix.log.Info("no change probe: every search waits for the watcher's barrier", zap.Error(err))
	} else {
		defer probe.Close()
	}
	wt := &watcher{ix: ix, w: w, probe: probe}
	// From now on an update watches each folder it visits before it lists
	// it, so that what changes after the listing raises an event; the
	// folders of earlier updates are polled (their changes since were not
	// watched) until an update visits them and watches them.
	ix.fw.SetAdder(wt.add, wt.unwatch)
	if ix.fw.Empty() {
		// Nothing was indexed yet: the folders to watch are found first.
		if _, err := ix.update(ctx, nil); err != nil && ctx.Err() == nil {
			ix.once.warn("watch:refresh", "updating the index failed; it is tried again at the next change", zap.Error(err))
		}
	}
	bar, err := runfs.NewBarrier(ix.root, w, ix.fw.MarkAllDirty)
	if err != nil {
		ix.once.warn("watch:barrier", "searches list the run folder: no private folder for the watcher's barrier", zap.Error(err))
	} else {
		defer bar.Close()
		ix.fw.SetBarrier(bar)
		if probe != nil {
			ix.fw.SetProbe(probe)
		}
	}
	kick()

	return wt.loop(ctx, bar, kick)
}

// releaseWatched gives the heap's free pages back to the kernel once
// Watch's first update has walked the run and watched its folders: the
// release after the first indexing (indexedAll) comes before the server
// publishes every file's diagnostics and before this walk, and on a reopen
// of 100,000 files the two took the process from 69 MB back to 179-193 MB
// of RssAnon that it no longer used (issue 33).
func (ix *Index) releaseWatched() {
	if ix.boundMemory {
		persist.ReleaseMemory()
	}
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
	folders := ix.fw.Kick()

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
			if hold := ix.fw.holdEvents.Load(); hold != nil {
				<-*hold
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
			ix.fw.MarkAllDirty()
			if bar != nil {
				bar.Lost()
			}
			schedule()
		case <-folders:
			wt.sync()
		case <-timer.C:
			pending = false
			kick()
		case <-poll.C:
			if ix.fw.Polling() {
				kick()
			}
		}
		if events == nil && errs == nil {
			// The watcher stopped on its own: poll from now on.
			ix.once.warn("watch:poll", "file-system events stopped: polling the run folder instead", zap.Duration("every", pollInterval))
			ix.fw.NoEvents()
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
	return f.askEvents(f.CurrentBarrier(), log).await(ctx)
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
	a.fw.MarkAllDirty()
	a.log.Info("the watcher's events are late or lost: this update walks the run folder", zap.Error(err))
	return nil
}

// freshIfWatched brings the index up to date before a request that reads a
// record file's table (Outline, RecordAt) when a healthy watcher makes that
// cheap: the barrier, then an update of what its events named, no walk. So
// documentSymbol and hover sent right after an append see it. Without a
// watcher the table is read as the last update left it (the watcher's or the
// next search's): a walk per request is what issue 13 took away. When
// nothing changed since the last update (runfs.Events.Quiet, as a search
// asks it), there is nothing to bring: no barrier, no update.
func (ix *Index) freshIfWatched(ctx context.Context) error {
	b := ix.fw.CurrentBarrier()
	if b == nil {
		return nil
	}
	if ix.indexed.Load() && ix.fw.Quiet(b) {
		ix.fw.quietAnswers.Add(1)
		return nil
	}
	pass := ix.fw.BeginPass() // what it drains, this update covers
	_, err := ix.Refresh(ctx, nil)
	pass.End(err == nil)
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

// followState is what discovery keeps between updates and what the watcher
// tells it (runfs.Discovery: its updates' part under refreshMu).
type followState struct {
	runfs.Discovery

	// hooks for tests; set before the index is used
	beforeRead  func(rel string)
	beforeBlock func(rel string, pos int64) error // an error fails the block's read
	newWatcher  func() (*fsnotify.Watcher, error)
	addWatch    func(w *fsnotify.Watcher, path string) error
	beforeQuiet func() // a request's quiet answer is about to be made
	// holdEvents, while set, holds the watcher's loop before it takes an
	// event until the channel is closed (a test's watcher late).
	holdEvents atomic.Pointer[chan struct{}]

	// quietAnswers counts the requests answered with no barrier and no
	// update (freshOnce, freshIfWatched: nothing changed), for tests.
	quietAnswers atomic.Int64
}
