package persist

// This file holds the catch of a fault on a mapped page of the cache entry
// (spec §15, issue 18): a blob's file cut by someone else under the
// running index makes a read of a page past its new end raise SIGBUS, and
// that read is the index's own, wherever it happens.
//
// Which goroutines read mapped memory, and so run guarded (guard):
//   - a request's answer (fresh: run/search, workspace/symbol, the CLI's
//     search and check), on the caller's goroutine; the engine's second
//     search goroutine (bm25.Searcher) carries a fault back to it;
//   - an update (update: every request's Refresh, the watcher's updates),
//     on its caller's goroutine, and each of its workers at the worker's
//     top: laying a batch out (the dictionary), committing it (the
//     statistics), and the merge at its end (the segments);
//   - the debounced writer (writeGuarded), which encodes the dictionary,
//     the statistics and any mapped segment.
//   - the views of the file states (the retriever's viewed: records,
//     outlines, diagnostics, failures, conversations, read-backs), whose
//     first read of a restored file's line index and record table copies
//     them out of the state blob's mapping (inplace.go, which catches a
//     fault or a failed check there itself and records it for the guard).
//
// A fault on an address inside one of the index's mappings (the snapshots
// mappingGuard holds) is the entry's corruption: the same path as a cut
// the guard's stat finds (dropMapping): the entry's commit dropped and
// said in one WARN, every file and segment forgotten, the run indexed
// afresh from the agents' files, and the request answered from that index
// (or failed once with the error, if the second try faults too, which
// nothing left mapped can make it do). A fault anywhere else is a bug, not
// corruption: it is panicked again, and crashes as it would have.
//
// What a fault leaves half-done is thrown away whole, not mended: every
// lock on a fault-prone path is released by a defer (the index's, the
// commit's, the dictionary's), a merge that faults never reaches
// setSegments (so no half-merged segment is ever visible), a worker that
// faults drains its jobs and commits nothing more, and forget then drops
// every segment, file state, dictionary and statistics the faulted work
// touched. The forgotten index's mappings stay mapped until Close: a
// search that read them before forget's write lock may still be reading a
// hit's columns after its read lock, and its fault, if any, is caught as
// any other; they are address space, not memory, and the kernel has
// dropped their cut pages already.
//
// The flag (runtime/debug.SetPanicOnFault) is the goroutine's: it is set
// for the call and put back after, as the SIGBUS-safe reader proposed to
// mmap-go does (edsrzf/mmap-go#37); libtorrent likewise turns the signal
// into an I/O error of the read that raised it (arvidn/libtorrent#5118).
// Setting it once for the process, as some mmap packages do at init, would
// make every other goroutine's fault a panic nobody recovers: the same
// crash. The address is checked because the flag turns every fault of the
// goroutine into a panic, a nil or stray pointer's too.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"go.uber.org/zap"
)

// mappingFault is a fault met reading a mapping of the cache entry.
type mappingFault struct {
	where   string
	err     error // the snapshot's: wraps store.ErrCorrupt
	checked bool  // a range of a blob failed its check at its first use (check.go), not a fault
}

func (f *mappingFault) Error() string { return f.where + ": " + f.err.Error() }
func (f *mappingFault) Unwrap() error { return f.err }

// IsFault reports whether err is a caught fault on a mapping.
func IsFault(err error) bool {
	var f *mappingFault
	return errors.As(err, &f)
}

// Guard runs the index's reads of mapped memory with a fault on a page of
// the cache entry caught: it stands for the writer whose mappings they are
// (none: an index without an entry, where a fault is a bug and crashes as
// it would have).
type Guard struct{ w *Writer }

// Guard returns the guard of w's mappings; w may be nil (no entry).
func (w *Writer) Guard() Guard { return Guard{w} }

// Run runs fn with a fault on a mapped page turned into a panic on this
// goroutine, and that panic into a fault error (IsFault) when the page is
// one of the index's mappings; any other panic goes on.
//
// A run that started while the restored files could be read reports a
// fault too when a check of their columns failed before it ended
// (inplace.go): what it read of them may be empty where it should not.
func (g Guard) Run(where string, fn func() error) (err error) {
	live := g.w.columnsLive()
	defer g.Rest(where, func(fault error) { err = fault })()
	err = fn()
	if fault := g.w.columnsFailed(where, live); fault != nil {
		err = fault
	}
	return err
}

// Rest guards the rest of the calling function, for a goroutine's top
// (defer g.Rest(...)()): it sets the goroutine's panic on fault now, and the
// function it returns, deferred, puts it back and gives a fault on one of
// the index's mappings to onFault; any other panic goes on.
func (g Guard) Rest(where string, onFault func(error)) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			onFault(g.faultError(where, r))
		}
	}
}

// faultError gives the fault r as a *mappingFault, or panics with r again
// when it is not a fault on one of the writer's mappings.
func (g Guard) faultError(where string, r any) error {
	if c, ok := r.(*checkFailure); ok && g.w != nil {
		return &mappingFault{where: where, err: c.err, checked: true}
	}
	f, ok := r.(interface{ Addr() uintptr })
	if ok && g.w != nil {
		if err := g.w.guard.fault(f.Addr()); err != nil {
			return &mappingFault{where: where, err: err}
		}
	}
	panic(r)
}

// Call is Guard.Run for a call with a result.
func Call[T any](g Guard, where string, fn func() (T, error)) (T, error) {
	var res T
	err := g.Run(where, func() error {
		var err error
		res, err = fn()
		return err
	})
	return res, err
}

// Guarded runs fn as Call does, and once more after dropping the entry
// when it faulted: the second run reads the index indexed afresh.
func Guarded[T any](g Guard, where string, fn func() (T, error)) (T, error) {
	res, err := Call(g, where, fn)
	if IsFault(err) {
		g.w.DropMapping(err)
		res, err = Call(g, where, fn)
	}
	return res, err
}

// writeGuarded is the writer's write, its faults caught: the entry is
// dropped, and the next write writes it whole. It reports a fault, after
// which the writer's loop indexes the run afresh at once (no request may
// come to do it).
func (w *Writer) writeGuarded() (faulted bool) {
	w.guard.inject("write")
	err := w.Guard().Run("writing the cache entry", func() error { w.write(); return nil })
	if err != nil {
		w.DropMapping(err)
	}
	return err != nil
}

// stopping is a context cancelled when the writer is stopped.
func (w *Writer) stopping() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-w.stop
		cancel()
	}()
	return ctx
}

// DropMapping drops everything restored from the entry, once, said in one
// WARN: the entry's commit (the snapshot marked it corrupt), every file and
// segment of the index. Callers that come while it runs wait for it, so
// that none answers from the index being dropped. The caller must not hold
// refreshMu.
func (w *Writer) DropMapping(err error) {
	if w == nil {
		return
	}
	g := &w.guard
	g.dropMu.Lock()
	defer g.dropMu.Unlock()
	if g.dropped {
		return
	}
	g.dropped = true
	g.mu.Lock()
	g.cut = true // the stat check has nothing more to find
	g.mu.Unlock()
	h := w.host
	why := "a file of it was cut under the running server"
	if f := (*mappingFault)(nil); errors.As(err, &f) && f.checked {
		why = "a blob of it is not as written (its checksum, checked at its first use)"
	}
	h.Log.Warn("dropped the cache entry: "+why+"; the run is indexed afresh", zap.String("entry", w.entry.Dir()), zap.Error(err))
	h.RefreshMu.Lock()
	defer h.RefreshMu.Unlock()
	w.mu.Lock()
	clear(w.segBlobs) // the next write writes every segment again
	w.mu.Unlock()
	h.Forget()
	g.forgotten.Store(true) // no restored file is read by a run that starts now
}

// faultOwner is a snapshot or a blob mapped alone (store): Fault reports a
// fault at addr inside its mappings as its corruption, else nil.
type faultOwner interface{ Fault(addr uintptr) error }

// fault reports a fault at addr on one of g's mappings as its corruption,
// or nil when addr is in none.
func (g *mappingGuard) fault(addr uintptr) error {
	g.mu.Lock()
	mapped := g.mapped
	g.mu.Unlock()
	for _, s := range mapped {
		if err := s.Fault(addr); err != nil {
			return err
		}
	}
	return nil
}

// Inject calls the guard's fault injection at point.
func (w *Writer) Inject(point string) {
	if w != nil {
		w.guard.inject(point)
	}
}

// inject calls the fault injection's hook at point (tests, and the
// runls_faultinject build): it cuts the watched files after the guard's
// check, where a cut is found only by the fault it raises.
func (g *mappingGuard) inject(point string) {
	if g.afterCheck != nil {
		g.afterCheck(point)
	}
}

// cutFiles truncates every watched blob file to nothing: each page of
// their mappings then faults. For fault injection only: it also takes the
// stat check as done, so that only the fault can find the cut (in a
// server, another goroutine's check could find it first, the race the
// fault's catch is for).
func (g *mappingGuard) cutFiles() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cut = true
	var errs []error
	for _, f := range g.files {
		errs = append(errs, os.Truncate(f.Name(), 0)) // f is open read-only
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cut the cache entry's files: %w", err)
	}
	return nil
}

// injectFaults, when set (by the runls_faultinject build only), gives each
// guard its afterCheck hook as it starts watching.
var injectFaults func(g *mappingGuard)
