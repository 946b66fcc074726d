package persist

// This file holds the checks of a restored commit's segments at their
// first use (issue 33): the entry is opened checking its structure only
// (store.VerifyFrame: the manifest's own checksum, every blob's length,
// header and footer), the dictionary and statistics are checked whole as
// they are read at open, and each segment's bytes are checked by range
// (store.Blob.CheckRange, 64 KiB chunks against the manifest's sums) the
// first time a search, an update or a write reads them: blobBacking is the
// bm25.Backing of a restored segment, and of the state blob (its sections
// read at open, its files' columns at their first use: inplace.go). A
// reopen so reads the pages its first answer needs, not the whole entry,
// and a corrupt byte is still never an answer.
//
// A range found bad panics with a checkFailure, on whatever goroutine reads
// it: every read of a mapped segment runs under the writer's Guard (it must
// catch a fault on a cut mapping too, fault.go), which takes a
// checkFailure for the entry's corruption as it takes such a fault: the
// entry's commit dropped (the snapshot is marked corrupt, and the writer's
// next write writes every segment again), one WARN, every file and
// segment forgotten, and the request answered again from the run indexed
// afresh. At open, decodeChecked turns it into the restore's error, which
// drops the commit as any unreadable one.

import (
	"fmt"
	"unsafe"

	"runls/internal/store"
)

// checkFailure is the panic of a blobBacking that found bytes bad.
type checkFailure struct{ err error } // wraps store.ErrCorrupt

func (c *checkFailure) Error() string { return c.err.Error() }
func (c *checkFailure) Unwrap() error { return c.err }

// blobBacking checks a restored segment's bytes in its mapped blob.
type blobBacking struct {
	blob *store.Blob
	snap *store.Snapshot
	base uintptr // the content's first byte in the mapping
	n    uintptr
}

func newBlobBacking(snap *store.Snapshot, blob *store.Blob, content []byte) *blobBacking {
	return &blobBacking{blob: blob, snap: snap, base: uintptr(unsafe.Pointer(unsafe.SliceData(content))), n: uintptr(len(content))}
}

// Check checks p's bytes, which must lie in the blob's content.
func (k *blobBacking) Check(p []byte) {
	if len(p) == 0 {
		return
	}
	off := uintptr(unsafe.Pointer(unsafe.SliceData(p))) - k.base
	if off >= k.n || uintptr(len(p)) > k.n-off {
		k.Corrupt(fmt.Errorf("bytes at %#x outside the blob", uintptr(unsafe.Pointer(unsafe.SliceData(p)))))
	}
	if err := k.blob.CheckRange(int64(off), int64(len(p))); err != nil {
		panic(&checkFailure{err})
	}
}

// CheckAll checks the whole blob.
func (k *blobBacking) CheckAll() {
	if err := k.blob.Check(); err != nil {
		panic(&checkFailure{err})
	}
}

// Corrupt takes a value found wrong for the blob's corruption.
func (k *blobBacking) Corrupt(err error) {
	err = fmt.Errorf("%w: %s: %v", store.ErrCorrupt, k.blob.Ref().Name, err)
	panic(&checkFailure{k.snap.MarkCorrupt(err)})
}

// decodeChecked runs fn, a decode that reads through a blobBacking, with a
// checkFailure turned into its error.
func decodeChecked(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(*checkFailure)
			if !ok {
				panic(r)
			}
			err = c.err
		}
	}()
	return fn()
}
