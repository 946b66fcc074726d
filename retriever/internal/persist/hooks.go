package persist

// This file holds what the retriever's tests reach of a writer: they make
// an index and its entry, then look at or act on the writer from outside
// (an internal package's tests cannot make an index).

import (
	"time"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
)

// Entry is the writer's entry.
func (w *Writer) Entry() *store.Entry { return w.entry }

// Restored is the commit the index was restored from (nil: none).
func (w *Writer) Restored() *store.Snapshot { return w.restored }

// WriteNow writes the entry now, as the debounced writes do.
func (w *Writer) WriteNow() { w.write() }

// SetDelay sets the delay of the debounced writes.
func (w *Writer) SetDelay(d time.Duration) { w.delay = d }

// Dropped reports whether the entry was dropped (DropMapping).
func (w *Writer) Dropped() bool {
	w.guard.dropMu.Lock()
	defer w.guard.dropMu.Unlock()
	return w.guard.dropped
}

// SetAfterCheck sets the fault injection's hook (fault.go).
func (w *Writer) SetAfterCheck(fn func(point string)) { w.guard.afterCheck = fn }

// CutFiles cuts the watched blob files (fault.go).
func (w *Writer) CutFiles() error { return w.guard.cutFiles() }

// BlobsOf calls fn under the writer's lock with a lookup of the blob each
// segment was written to: fn may take the index's lock, as the writer does
// under its own.
func (w *Writer) BlobsOf(fn func(blobOf func(*corpus.Segment) (store.BlobRef, bool), n int)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(func(s *corpus.Segment) (store.BlobRef, bool) { ref, ok := w.segBlobs[s]; return ref, ok }, len(w.segBlobs))
}

// Abandon ends the writer as a kill would: nothing more is written, and the
// entry's lock is let go (the process's end lets it go).
func (w *Writer) Abandon() error {
	close(w.stop)
	<-w.done
	w.once.Do(func() {})
	return w.entry.Close()
}

// CommitTo commits host's state into entry, as the writer does, with no
// writer kept.
func CommitTo(entry *store.Entry, host Host) error {
	w := &Writer{host: host, entry: entry, segBlobs: map[*corpus.Segment]store.BlobRef{}}
	return w.commit()
}
