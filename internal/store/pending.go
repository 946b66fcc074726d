// This file holds the blobs a writer keeps before any commit names them
// (a segment flushed to the entry as soon as it is built): mapped back
// alone, removed when replaced before a commit, and made durable by the
// commit that first names them.

package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// MapBlob opens a blob this process wrote (CreateBlob) and no commit names
// yet, mapped read-only (or read onto the heap, as the entry's Read mode
// says), its frame checked: a writer that keeps a part of its index in a
// blob from the moment it is built, before any commit, reads it back
// through this. The blob's content is not checked again (it was checksummed
// as it was written). The caller closes the blob (Blob.Close) when nothing
// reads it any more; removing its file first (Discard, or a later Commit
// that does not name it) is safe, the mapping keeps the pages.
func (e *Entry) MapBlob(ref BlobRef) (*Blob, error) {
	e.mu.Lock()
	known, ok := e.pending[ref.Name]
	if !ok && e.m != nil {
		for _, b := range e.m.Blobs {
			if b.Name == ref.Name {
				known, ok = b, true
			}
		}
	}
	e.mu.Unlock()
	if !ok || known != ref {
		return nil, fmt.Errorf("store: map blob %q that this entry does not hold", ref.Name)
	}
	b, err := openBlob(e.dir, ref, e.opts.Read, false, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Name, err)
	}
	b.setChecked(nil) // checksummed as it was written: Check and CheckRange say so
	return b, nil
}

// Discard removes a blob this process wrote that no commit names (a part
// of the index replaced before any commit named it: a merge's input). A
// blob the current commit names is left alone: the next Commit that does
// not name it removes it, so that no open of the entry (this process's or
// another's) ever misses a blob its commit names. Mappings of the blob
// stay readable.
func (e *Entry) Discard(ref BlobRef) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lock == nil {
		return
	}
	if known, ok := e.pending[ref.Name]; !ok || known != ref {
		return
	}
	delete(e.pending, ref.Name)
	delete(e.unsynced, ref.Name)
	os.Remove(filepath.Join(e.dir, ref.Name))
}

// Close unmaps a blob opened alone (Entry.MapBlob); a snapshot's blobs are
// closed by the snapshot's Close, and this does nothing to them. No slice
// from Bytes may be used after it.
func (b *Blob) Close() error {
	if b.snap != nil || b.file == nil {
		return nil
	}
	var err error
	if b.mapped {
		err = unmapFile(b.file)
	}
	b.file = nil
	return err
}

// syncBlobsLocked makes durable the blobs of blobs written unsynced.
func (e *Entry) syncBlobsLocked(blobs []BlobRef) error {
	for _, b := range blobs {
		if !e.unsynced[b.Name] {
			continue
		}
		f, err := os.Open(filepath.Join(e.dir, b.Name))
		if err == nil {
			err = f.Sync()
			f.Close()
		}
		if err != nil {
			return fmt.Errorf("store: commit: %w", err)
		}
		delete(e.unsynced, b.Name)
	}
	return nil
}
