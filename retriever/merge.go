package retriever

// This file holds the segments' merges after an update (bm25.MergePolicy):
// each merge is built outside the index's lock, flushed to the cache
// entry, and swapped in under the lock, so that a search during a merge
// of seconds answers from the segments it replaces, as it would without
// it.

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"runls/internal/store"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
)

// mergeLater starts the merges the policy picks now on a goroutine of their
// own, after an update of a server that added segments or killed pieces
// (refresh): they are not on the update's path (the
// first index's end, its progress, the requests that wait for an update),
// and they hold no lock while they read and write: an update may run
// beside one, and a search too. One at a time. A command (OneShot) merges
// in its update instead (refresh), as it exits after its answer.
func (ix *Index) mergeLater() {
	if ix.oneShot || ix.mergesOff.Load() || !ix.mergeMu.TryLock() {
		// Merged in refresh, or the merge goroutine runs: it looks at
		// mergeDue again before it ends, so no update's merge is lost.
		return
	}
	go func() {
		for {
			for !ix.closing() && ix.mergeDue.Swap(false) {
				ix.mergeDueNow()
			}
			ix.mergeMu.Unlock()
			// An update that ended after the loop's last look, and found
			// the lock held, left its merge due.
			if ix.closing() || !ix.mergeDue.Load() || !ix.mergeMu.TryLock() {
				return
			}
		}
	}()
}

// mergeDueNow makes the merges the policy picks now, on the merge
// goroutine; after a fault it indexes the run afresh, whose merges are due
// then.
func (ix *Index) mergeDueNow() {
	start := time.Now()
	merges, err := ix.mergeAll(ix.refreshMu.Lock, ix.refreshMu.Unlock)
	if merges == 0 && err == nil {
		return // the policy picked none
	}
	ix.mu.RLock()
	segments := len(ix.state.Segments)
	ix.mu.RUnlock()
	ix.log.Debug("merged segments", zap.Int("segments", segments), zap.Duration("took", time.Since(start)), zap.Error(err))
	if persist.IsFault(err) && !ix.closing() {
		// A merge reads mapped segments: a fault drops the entry, and the
		// run is indexed afresh now, as the writer does (no request may
		// come to do it), under the index's life: Close ends it.
		ix.cache.DropMapping(err)
		if _, err := ix.update(ix.life, nil); err != nil && !ix.closing() {
			ix.once.warn("merge:refresh", "indexing the run afresh after a fault in a merge failed; it is tried again at the next change", zap.Error(err))
		}
	}
	ix.cache.Changed()
}

// MergeIdle starts, on the merge goroutine, the merges the policy picks
// now; it does nothing when it picks none or one runs already. A server
// calls it once it has been idle for a while after its first index: a
// reopen that found the run as its entry left it merges nothing itself
// (refresh), as a merge beside its first answer made that answer several
// times slower, so an entry left part-merged (a server closed soon after
// its first index, a command's first index) would stay so for good, and
// every search would pay its extra segments. A command (OneShot) merges
// in its update and does nothing here.
func (ix *Index) MergeIdle() {
	if ix.oneShot {
		return
	}
	ix.mergeDue.Store(true)
	ix.mergeLater()
}

// awaitMerges waits for the merge goroutine (mergeLater), if one runs.
func (ix *Index) awaitMerges() {
	ix.mergeMu.Lock()
	ix.mergeMu.Unlock()
}

// mergeAll merges until the policy picks none (or the index closes), each
// merge's swap between lock and unlock of the update lock (a command's
// update holds it, and gives none); it counts the merges swapped in.
func (ix *Index) mergeAll(lock, unlock func()) (merges int, err error) {
	for ; !ix.closing(); merges++ {
		done, err := ix.mergeOnce(lock, unlock)
		if done || err != nil {
			return merges, err
		}
	}
	return merges, nil
}

// closing reports whether Close began: no merge is begun any more, and the
// one under way stops.
func (ix *Index) closing() bool { return ix.life.Err() != nil }

// mergeOnce makes one merge the policy picks, or reports none to make. It
// reads the segments outside the index's locks, with a copy of their dead
// bits taken under the read lock, and flushes its output to the entry (as
// a batch's is); then, with no update under way (the update lock) and under
// the write lock, Replace swaps it in and kills in it what died since the
// copy. A merge that faults on a mapped segment never reaches Replace: no
// half-merged segment is seen.
func (ix *Index) mergeOnce(lock, unlock func()) (done bool, err error) {
	ix.mu.RLock()
	picked := ix.state.MergeCandidates(ix.mergePolicy(), ix.mergesHeapOnly())
	dead := corpus.DeadBits(picked)
	ix.mu.RUnlock()
	if len(picked) == 0 {
		return true, nil
	}
	ix.cache.Inject("merge")
	err = ix.cache.Guard().Run("merging segments", func() error {
		merged, moved := corpus.MergeSegments(picked, dead, ix.searcher.Tuning.LayerMin, ix.closing)
		if moved == nil {
			return errMergeStopped // the index closes
		}
		var ref store.BlobRef // the merged blob's: a dropped entry forgets it
		if merged.Docs() == 0 {
			merged = nil
		} else {
			merged, ref = ix.cache.FlushBuilt(merged)
		}
		if h := ix.mergeHeld; h != nil {
			h()
		}
		lock()
		ix.mu.Lock()
		swapped := ix.state.Replace(picked, merged, moved)
		ix.mu.Unlock()
		unlock()
		if !swapped {
			ix.cache.DiscardBuilt(merged, ref) // a zero ref is no blob
			return errMergeForgotten
		}
		ix.cache.DropReplaced(picked)
		if h := ix.mergeDone; h != nil {
			h()
		}
		return nil
	})
	if errors.Is(err, errMergeForgotten) || errors.Is(err, errMergeStopped) {
		return true, nil // what forgot the state indexes the run afresh
	}
	return false, err
}

// mergePolicy is the engine's, or a command's (bm25.CommandMergePolicy).
func (ix *Index) mergePolicy() bm25.MergePolicy {
	if ix.oneShot {
		return bm25.CommandMergePolicy
	}
	return bm25.DefaultMergePolicy
}

// mergesHeapOnly reports whether the merges leave alone the segments read
// back from the cache entry: its output would stay on the heap, as the
// entry is another process's to write (or cannot be written), and copy
// there what the mapping held.
func (ix *Index) mergesHeapOnly() bool {
	return ix.cache != nil && !ix.cache.Flushes()
}

var (
	// errMergeForgotten is a merge whose sources the index no longer has.
	errMergeForgotten = errors.New("the merged segments were forgotten")
	// errMergeStopped is a merge left half-way: the index closes.
	errMergeStopped = errors.New("the merge was stopped")
)
