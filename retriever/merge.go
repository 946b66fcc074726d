package retriever

// This file holds the segments' merges after an update (bm25.MergePolicy):
// each merge is built outside the index's lock, flushed to the cache
// entry, and swapped in under the lock, so that a search during a merge
// of seconds answers from the segments it replaces, as it would without
// it.

import (
	"context"

	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
)

// mergeLater starts the merges the policy picks now on a goroutine of their
// own, after an update of a server: they are not on the update's path
// (the first index's end, its progress, the requests that wait for an
// update). One at a time; an update waits for the merge under way, which
// holds the update lock (no piece of a segment it reads dies meanwhile),
// each merge at a time. A command (OneShot) merges in its update instead
// (refresh), as it exits after its answer.
func (ix *Index) mergeLater() {
	if ix.oneShot || ix.mergesOff.Load() || !ix.mergeMu.TryLock() {
		return // merged in refresh, or a merge goroutine is under way
	}
	ix.mu.RLock()
	picked := len(ix.state.MergeCandidates())
	ix.mu.RUnlock()
	if picked == 0 || ix.closing.Load() {
		ix.mergeMu.Unlock()
		return
	}
	go func() {
		defer ix.mergeMu.Unlock()
		err := ix.mergeAll(func() {
			ix.refreshMu.Lock()
		}, ix.refreshMu.Unlock)
		if persist.IsFault(err) && !ix.closing.Load() {
			// A merge reads mapped segments: a fault drops the entry, and
			// the run is indexed afresh now, as the writer does (no
			// request may come to do it).
			ix.cache.DropMapping(err)
			_, _ = ix.update(context.Background(), nil)
		}
		ix.cache.Changed()
	}()
}

// awaitMerges waits for the merge goroutine (mergeLater), if one runs.
func (ix *Index) awaitMerges() {
	ix.mergeMu.Lock()
	ix.mergeMu.Unlock()
}

// mergeAll merges until the policy picks none (or the index closes), each
// merge between lock and unlock of the update lock (none: the caller holds
// it).
func (ix *Index) mergeAll(lock, unlock func()) error {
	for !ix.closing.Load() {
		lock()
		done, err := ix.mergeOnce()
		unlock()
		if done || err != nil {
			return err
		}
	}
	return nil
}

// mergeOnce makes one merge the policy picks, or reports none to make. The
// caller holds the update lock, not the index's lock. The merge reads the
// segments, mapped ones too: one that faults never reaches Replace, so no
// half-merged segment is seen. Its output is flushed to the entry before
// the swap (as a batch's is), which takes the write lock for no more than
// the files' references' move.
func (ix *Index) mergeOnce() (done bool, err error) {
	ix.mu.RLock()
	picked := ix.state.MergeCandidates()
	ix.mu.RUnlock()
	if len(picked) == 0 {
		return true, nil
	}
	ix.cache.Inject("merge")
	err = ix.cache.Guard().Run("merging segments", func() error {
		merged, moved := corpus.MergeSegments(picked, ix.searcher.Tuning.LayerMin)
		if merged.Docs() == 0 {
			merged = nil
		} else {
			merged = ix.cache.FlushBuilt(merged)
		}
		if h := ix.mergeHeld; h != nil {
			h()
		}
		ix.mu.Lock()
		ix.state.Replace(picked, merged, moved)
		ix.mu.Unlock()
		ix.cache.DropReplaced(picked)
		return nil
	})
	return false, err
}
