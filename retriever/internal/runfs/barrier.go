package runfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// BarrierTimeout bounds the wait for a barrier's event; past it the update
// walks every folder instead.
const BarrierTimeout = time.Second

var ErrBarrierLate = errors.New("the barrier's event did not come back in time")

// A Barrier tells an update when the watcher has read every event the kernel
// queued before the update was asked for, so that a search sees each change
// made before it without listing a folder or giving a file a stat.
//
// Why that holds (Linux, inotify). A change to a watched folder's entries, or
// to a file in a watched folder, queues its event before the system call that
// made it returns: fsnotify's hooks run in the writer's call. All watches of
// one inotify instance share one queue, read in order. The barrier is a file
// in a private folder (never in the run), watched by the same instance: a
// write to it made after a search was asked queues its event behind the
// event of every change made before. The watcher's loop takes events one at a
// time in that order and records each (the retriever's change set) before it takes the
// next; fsnotify hands them over in the kernel's order, an overflow included.
// So once the loop has seen the barrier's event, every change made before the
// search is in the change set, or was taken by an update that started since;
// the search's update waits for any update under way (refreshMu) and takes
// the rest.
//
// One write is in flight at a time, so its event is told apart without a
// name of its own: the write before it came back before it was made. A
// search that comes while a write is in flight (made, perhaps, before the
// search was asked) waits for the next write, which is made when the one in
// flight comes back; searches that come together share it. When the kernel's
// queue overflows, events are lost, the barrier's perhaps among them: the
// watcher marks every folder to be listed, then counts the write in flight as
// come back. A write whose event does not come back within BarrierTimeout is
// given up the same way, so a search never waits long and never misses a
// change: it walks the run folder instead.
type Barrier struct {
	dir, path string
	f         *os.File
	lostFn    func() // makes the next update walk every folder

	mu      sync.Mutex
	written uint64        // writes made
	seen    uint64        // writes come back (or given up)
	again   bool          // a waiter needs a write after the one in flight
	err     error         // a write failed: the barrier is not used again
	changed chan struct{} // closed and replaced when seen or err changes
	waits   int           // waits begun, for tests
}

// NewBarrier makes a barrier in a private folder outside root, watched by w.
func NewBarrier(root string, w *fsnotify.Watcher, lost func()) (*Barrier, error) {
	if !OrderedEvents {
		return nil, errors.New("file-system events of this system are not known to come in order")
	}
	dir, err := privateDir(root)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "barrier")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = lockBarrier(f)
		if err == nil {
			err = w.Add(dir)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("barrier: %w", err)
	}
	return &Barrier{dir: dir, path: path, f: f, lostFn: lost, changed: make(chan struct{})}, nil
}

// barrierPrefix names the barriers' folders, followed by the process's id
// and a dash. Each holds its barrier file locked for the life of its
// process, so a folder whose file can be locked is one its process left
// behind (killed: an editor's kill after a shutdown that timed out, kill
// -9), which NewBarrier removes. The id spares this process's own folders
// where a lock would not conflict within it (flock on NFS is emulated with
// a process's fcntl locks).
const barrierPrefix = "runls-barrier-"

// staleAge spares a folder so young that its process may not have locked
// its file yet.
const staleAge = time.Minute

// privateDir makes a folder of the process's own, in the temp folder or the
// user's cache folder, whichever is not inside the run folder; it first
// removes the folders there that dead processes left.
func privateDir(root string) (string, error) {
	var errs []error
	for _, base := range []func() (string, error){
		func() (string, error) { return os.TempDir(), nil },
		os.UserCacheDir,
	} {
		b, err := base()
		if err == nil {
			b, err = filepath.EvalSymlinks(b)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if b == root || strings.HasPrefix(b, root+string(filepath.Separator)) {
			errs = append(errs, fmt.Errorf("%s is inside the run folder", b))
			continue
		}
		removeStale(b, time.Now(), os.Getpid())
		dir, err := os.MkdirTemp(b, barrierPrefix+strconv.Itoa(os.Getpid())+"-")
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

// removeStale removes base's barrier folders older than staleAge whose
// barrier file no process holds locked, but for process self's. Nothing
// else would remove them, and a temp folder that a test suite or an
// editor's restarts fill with them is a nuisance. Its errors are dropped on
// purpose: a folder it cannot list, read, lock or remove is left as it was,
// and the barrier is made either way.
func removeStale(base string, now time.Time, self int) {
	dirs, _ := filepath.Glob(filepath.Join(base, barrierPrefix+"*"))
	own := barrierPrefix + strconv.Itoa(self) + "-"
	for _, dir := range dirs {
		if strings.HasPrefix(filepath.Base(dir), own) {
			continue
		}
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() || now.Sub(info.ModTime()) < staleAge {
			continue
		}
		whenUnlocked(filepath.Join(dir, "barrier"), func() { _ = os.RemoveAll(dir) })
	}
}

// Path is the barrier's file: the watcher's loop hands its events to
// Arrived.
func (b *Barrier) Path() string { return b.path }

// Close closes the barrier's file and removes its folder.
func (b *Barrier) Close() {
	b.f.Close()
	os.RemoveAll(b.dir)
}

// Wait returns once the watcher has seen every event queued before the call,
// or an error when that cannot be told (the caller walks every folder).
func (b *Barrier) Wait(ctx context.Context, timeout time.Duration) error {
	target, err := b.Ask()
	if err != nil {
		return err
	}
	return b.Await(ctx, target, timeout)
}

// Ask is the first half of wait: it makes, or asks for, a write after the
// call, and returns the count of writes come back that await waits for. What
// the caller does between the two halves runs while the event is on its way.
func (b *Barrier) Ask() (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	b.waits++
	if b.written == b.seen {
		if err := b.write(); err != nil {
			return 0, err
		}
		return b.written, nil
	}
	b.again = true
	return b.written + 1, nil
}

// Await is the second half of wait: it returns once target writes came back
// (or were given up), so that every event queued before ask was seen.
func (b *Barrier) Await(ctx context.Context, target uint64, timeout time.Duration) error {
	b.mu.Lock()
	var timer *time.Timer
	for b.seen < target && b.err == nil {
		c := b.changed
		b.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-c:
			b.mu.Lock()
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			b.mu.Lock()
			if b.seen < target && b.err == nil {
				b.giveUp()
				b.mu.Unlock()
				return ErrBarrierLate
			}
		}
	}
	defer b.mu.Unlock()
	return b.err
}

// write makes the next write. Under mu.
func (b *Barrier) write() error {
	b.written++
	if _, err := b.f.WriteAt([]byte{byte(b.written)}, 0); err != nil {
		b.written--
		b.err = fmt.Errorf("barrier: %w", err)
		b.signal()
		return b.err
	}
	return nil
}

// Arrived is the watcher's loop telling that the barrier's event came.
func (b *Barrier) Arrived() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == b.written {
		return // nothing in flight: a stray event
	}
	b.seen = b.written
	b.signal()
	if b.again {
		b.again = false
		_ = b.write() // an error is kept in err, which the waiters see
	}
}

// Lost is the watcher's loop telling that events were lost, and that it
// marked every folder to be listed: the write in flight counts as come back.
func (b *Barrier) Lost() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.giveUp()
}

// giveUp counts the write in flight, and the one asked for after it, as come
// back, after making the next update walk every folder. Under mu.
func (b *Barrier) giveUp() {
	if b.seen == b.written && !b.again {
		return
	}
	b.lostFn()
	if b.again {
		// The waits for the next write are served by the walk as well.
		b.written++
		b.again = false
	}
	b.seen = b.written
	b.signal()
}

// healthy reports whether the barrier's writes work.
func (b *Barrier) healthy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err == nil
}

func (b *Barrier) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}
