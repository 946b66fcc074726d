package persist

// This file holds what the retriever's tests reach of a writer: they make
// an index and its entry, then look at or act on the writer from outside
// (an internal package's tests cannot make an index).

import (
	"fmt"
	"time"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
)

// Entry is the writer's entry.
func (w *Writer) Entry() *store.Entry { return w.entry }

// Restored is the commit the index was restored from (nil: none).
func (w *Writer) Restored() *store.Snapshot { return w.restored }

// PathsValidated is how many paths the restore checked as if from outside
// (StateBlob.pathWritten): none of a blob the entry's checksums cover.
func (w *Writer) PathsValidated() int { return w.validated }

// PathsValidated is how many paths FileStates checked as if from outside.
func (st *StateBlob) PathsValidated() int { return st.validated }

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

// DecodeState reads a state blob's sections whole, nothing left for a
// first use (its slices point into b): the eager decode the reopen made
// before issue 33, which the tests hold the in-place one against.
func DecodeState(b []byte) (*StateBlob, error) { return decodeState(b, nil, nil) }

// DecodeStateInPlace decodes a state blob as the reopen decodes it from its
// mapping, its files' line indexes and record tables left in b and checked
// at their first use (inplace.go), by their values only (b has no chunk
// sums): for the fuzz test of that decode against DecodeState's.
func DecodeStateInPlace(b []byte) (st *StateBlob, err error) {
	err = decodeChecked(func() error {
		st, err = decodeState(b, trustedBacking{}, nil)
		return err
	})
	return st, err
}

// ColumnsFailed is the first failure found making a file's columns of st
// the heap's (inplace.go), or nil.
func (st *StateBlob) ColumnsFailed() error {
	if f := st.cols.failed.Load(); f != nil {
		return f.err
	}
	return nil
}

// trustedBacking checks no byte; a value found wrong panics as a
// blobBacking's does.
type trustedBacking struct{}

func (trustedBacking) Check([]byte) {}
func (trustedBacking) CheckAll()    {}
func (trustedBacking) Corrupt(err error) {
	panic(&checkFailure{fmt.Errorf("%w: %v", store.ErrCorrupt, err)})
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

// ColumnsKept reports whether a restored file's columns still in the state
// blob's mapping were made the heap's (inplace.go): false for a file whose
// columns were never in the mapping.
func ColumnsKept(fs *corpus.File) bool {
	m, ok := fs.MappedColumns().(*mappedFile)
	return ok && m.own.Load() != nil
}
