package runfs

// This file holds the change probe: what lets a search skip the barrier's
// round trip and the update after it when nothing changed since the last
// update (issue 33), without giving up the barrier's promise (barrier.go):
// every change made before a search is seen by it.

import (
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"
)

// A Probe is a second inotify instance, never read by a goroutine, that
// watches every folder the watcher's fsnotify instance watches, with the
// same mask (probeMask). A search asks it, without blocking, whether any
// event was queued since the last search that drained it (Quiet); when
// none was, and nothing else is pending (Events.Quiet), the committed
// state already holds every change made before the search, which is then
// answered from it: no barrier, no update.
//
// Why that holds (Linux, inotify), case by case:
//
//   - Every event the watcher could get, the probe gets too. Both watch a
//     folder's inode with the same mask, and a change queues its event on
//     every instance that watches the inode before the system call that made
//     it returns (fsnotify's hooks run in the writer's call). The probe's
//     watch of a folder is added before the watcher's (the retriever's
//     watcher.add) and so before the folder is listed; it is dropped after
//     the watcher's is (the unwatch callbacks of Events.Event, Events.Sync
//     and Events.Watch), and only when no other path holds the same watch
//     (two paths of one inode share one watch descriptor in an instance,
//     which the watcher drops as soon as either path is dropped, the probe
//     only when both are). One exception: Probe.Add finding another inode
//     at a path whose older watch it still holds drops that one first.
//     Harmless: the watcher's add of the path at the new inode comes next,
//     and fsnotify forgets the older watch then too (one watch a path);
//     Events.Watch has by then dropped any watch counted at the path at an
//     older inode (below). A probe that cannot watch a
//     folder the watcher may watch (the watch limit) is off for good.
//
//   - The watcher's events are fsnotify's, which keeps one watch a path and
//     one a descriptor: a folder whose inode is already watched under
//     another path gets that watch back and no path of its own (its events
//     are reported under the other path, until that path's event or Sync
//     drops both), and a path added again at another inode takes the path
//     away from the older watch, whose events fsnotify then drops while
//     the kernel still queues them (a folder moved, then a new one made at
//     its old path, both listed by one update, the moved one first). So
//     Events.Watch drops a path's watch at an older inode, with every path
//     sharing it, before adding the new one: a folder whose watch went is
//     polled until an update watches it afresh.
//
//   - A folder's path may name another inode at the watcher's add than at
//     the probe's (or none at the probe's: that add fails, and the probe
//     stays on): then the folder was removed or moved in between, which
//     queued an event on its parent's watch, the probe's too (a parent is
//     watched before its listing finds the folder). The search that drains
//     that event waits at the barrier for the watcher's loop to take it.
//     Taken after the watch was counted, it drops the folder's watch
//     (Events.Event); taken while the watch is added (not counted yet,
//     nothing to drop), it makes Events.Watch not count it and drop the
//     watch just added (Events.adding: an event naming the folder or one
//     above it). Either way the folder is polled until an update watches
//     it again, the probe's watch first. Only the run folder itself has no
//     parent watched: it is not expected to be replaced under the server.
//
//   - A folder made and written into while its watch is added: its making
//     queued an event on its parent's watch; what was written in it before
//     the probe's watch is found by its listing, which comes after both
//     watches and is made by an update that the search's pass waits for (or
//     that is under way: Events.Quiet says no); what was written between
//     the two watches raised the probe's event alone (a slow pass for
//     nothing), and is before the listing too.
//
//   - A file renamed in (or out) queues IN_MOVED_TO (IN_MOVED_FROM) on its
//     folder's watch; a folder renamed in is a folder made, as above.
//
//   - A change C made before a search S queued its event on the probe
//     before S began, and that event is either still queued when S asks
//     (FIONREAD says some bytes: the slow path), or was drained by a search
//     S' at the start of its slow pass (Begin), under the same lock as
//     S's ask. S' took a ticket when it drained; its barrier is asked after
//     the drain, so after C, and once its update returns, C is committed
//     (barrier.go: the events queued before the barrier's ask are in the
//     change set or were taken by an update that started since, and the
//     update waits for any update under way). So Quiet says yes only when
//     no pass is in flight (S' mid-update: S waits its turn on the slow
//     path), and when the last pass that failed (a cancelled wait, a failed
//     update: what it drained may not be committed) was followed by one
//     begun after it that ended well: begun later, it drained later, and
//     its barrier covers what the failed one drained.
//
//   - The watcher's own updates, made on its events after a pause, never
//     drain the probe: the events they take stay queued on it until a
//     search's pass drains them (one slow search after a burst of changes).
//     While one is under way it holds a change set taken (Events.taken) and
//     Events.Quiet says no.
//
//   - A queue overflow is an event (IN_Q_OVERFLOW, queued when the queue is
//     full): the slow path. What the kernel dropped after it are changes
//     made before the next drain, which that pass's barrier covers.
//
//   - A folder deleted drops its watch (IN_IGNORED, an event too): a drain
//     forgets its descriptor, which the kernel does not hand out again
//     before the instance has made 2^31 watches (idr_alloc_cyclic), so a
//     late removal of it never drops another folder's watch.
//
//   - The watcher failing: an error (events lost) marks every folder to be
//     walked, which Events.Quiet sees; the watcher stopping clears the
//     barrier (Events.NoEvents), and every search walks the run folder from
//     then on, as before the probe.
//
//   - What raises no event is not the probe's to tell, and Events.Quiet
//     says no while any of it is pending: a folder not watched (polled: the
//     watch limit, a network file system, a folder of an earlier update not
//     yet watched), a file polled (a hard link, a failed read), a folder
//     that could not be read, what a cancelled update left, a change set
//     not empty (events lost; the cache entry dropped, the run to be read
//     afresh), and an update under way.
//
// A probe that cannot be made (not Linux, no inotify instance left) is
// never quiet: every search takes the barrier's path, as before the probe.
type Probe struct {
	mu     sync.Mutex
	in     probeInstance
	live   bool             // made, every watch added, not closed
	byRel  map[string]int32 // the watch of each folder (slash path), as added
	refs   map[int32]int    // the folders holding each watch descriptor
	buf    []byte           // a drain's reads
	begun  uint64           // tickets handed out by Begin, one a slow pass
	flight int              // passes begun and not ended
	failed uint64           // the latest ticket whose pass failed (0: none)
	done   uint64           // the latest ticket whose pass succeeded

	quiets atomic.Int64 // Quiet said yes, for tests
}

// NewProbe makes a probe, or says why none can be had here.
func NewProbe() (*Probe, error) {
	in, err := newProbeInstance()
	if err != nil {
		return nil, err
	}
	return &Probe{in: in, live: true, byRel: map[string]int32{}, refs: map[int32]int{}}, nil
}

var errProbeOff = errors.New("the change probe is off")

// Add watches folder rel at path, before the watcher's watch of it is
// added and before it is listed. A probe that cannot watch it is never
// quiet again (the error says why; the watcher goes on without it).
func (p *Probe) Add(rel, path string) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live {
		return errProbeOff
	}
	wd, err := p.in.add(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return err // moved or removed since it was listed: see Probe
	}
	if err != nil {
		p.offLocked()
		return err
	}
	if old, ok := p.byRel[rel]; ok {
		if old == wd {
			return nil
		}
		// Another inode at the path: the watcher's watch of the path
		// moves to the new one as well (fsnotify keeps a watch a path).
		p.dropLocked(old)
	}
	p.byRel[rel] = wd
	p.refs[wd]++
	return nil
}

// Remove drops folder rel's watch, after the watcher dropped its own.
func (p *Probe) Remove(rel string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	wd, ok := p.byRel[rel]
	if !ok || !p.live {
		return
	}
	delete(p.byRel, rel)
	p.dropLocked(wd)
}

// dropLocked drops a folder's hold on watch wd, and the watch when none
// holds it. Under mu.
func (p *Probe) dropLocked(wd int32) {
	if p.refs[wd]--; p.refs[wd] > 0 {
		return
	}
	delete(p.refs, wd)
	p.in.remove(wd) // gone already when its folder was deleted
}

// Refuse turns the probe off for good, giving its watches back: the
// watcher needs them (the per-user watch limit reached).
func (p *Probe) Refuse() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offLocked()
}

// Close turns the probe off and closes its instance.
func (p *Probe) Close() { p.Refuse() }

// offLocked closes the instance (and with it every watch): the probe is
// never quiet again. Under mu.
func (p *Probe) offLocked() {
	if p.live {
		p.in.close()
	}
	p.live = false
	p.byRel, p.refs = nil, nil
}

// Quiet reports whether no event was queued since the last drain, no slow
// pass is in flight, and every pass that failed was covered by a later
// one (see Probe). The caller has checked everything else (Events.Quiet).
func (p *Probe) Quiet() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live || p.flight > 0 || p.failed >= p.done && p.failed > 0 {
		return false
	}
	n, err := p.in.queued()
	if err != nil {
		p.offLocked()
		return false
	}
	if n > 0 {
		return false
	}
	p.quiets.Add(1)
	return true
}

// Begin starts a slow pass (the barrier, then an update): it drains the
// queue and returns the pass's ticket, which End is given. 0: no probe,
// nothing to end.
func (p *Probe) Begin() uint64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live {
		return 0
	}
	p.begun++
	p.flight++
	if p.buf == nil {
		p.buf = make([]byte, 4096)
	}
	if err := p.in.drain(p.buf, p.forgetLocked); err != nil {
		p.offLocked()
	}
	return p.begun
}

// End ends the pass of ticket t; ok says that its update returned, so
// that every change made before its drain is committed.
func (p *Probe) End(t uint64, ok bool) {
	if p == nil || t == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flight--
	switch {
	case !ok:
		p.failed = max(p.failed, t)
	default:
		p.done = max(p.done, t)
	}
}

// forgetLocked forgets watch wd, which the kernel dropped (its folder
// deleted, or its file system unmounted). Under mu.
func (p *Probe) forgetLocked(wd int32) {
	if _, ok := p.refs[wd]; !ok {
		return
	}
	delete(p.refs, wd)
	for rel, w := range p.byRel {
		if w == wd {
			delete(p.byRel, rel)
		}
	}
}

// Off reports whether the probe is off for good (never quiet again).
func (p *Probe) Off() bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.live
}

// Quiets is how many times Quiet said yes (tests: the fast path runs).
func (p *Probe) Quiets() int64 {
	if p == nil {
		return 0
	}
	return p.quiets.Load()
}

// Watches is how many watch descriptors the probe holds (tests).
func (p *Probe) Watches() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.refs)
}
