package persist

// This file holds the segments flushed as they are made (issue 18): a
// segment built from a batch, or merged, is written to the cache entry as a
// blob at once, read back from its mapping, and its heap copy dropped, so
// that the first indexing of a run holds on the Go heap only what is being
// built (the builders' batches), the files' states, the dictionary and the
// statistics: not the run's postings, which are most of the index (0.42x of
// a generated 1 GB run; the heap's peak was 0.64x, RssAnon's 1.1x).
//
// A merge's output is flushed so too (FlushBuilt, before the index has it):
// the merge reads its sources outside the index's lock, and only the swap
// takes it.
//
// The blob is the one the debounced writer (writer.go) would have written
// (encodeSegment), so that writer then writes only the state, the
// dictionary, the statistics and the segments still on the heap, and a
// commit naming the flushed blobs. Until a commit names it, a flushed blob
// is the entry's "pending" blob: harmless if the process dies first (the
// next writer's open removes the blobs no commit names, under the writer's
// lock, which this process holds while it writes any), and removed by this
// process when a merge replaces its segment before a commit named it
// (store.Entry.Discard; a blob a commit names is removed by the next commit
// that does not name it, so no open of the entry misses one).
//
// Which segments: those of at least flushMinDocs pieces, with the entry
// writable by this process. A smaller one (the batches of a few appended
// lines, which following makes every second) would cost a write and an
// fsync on the update's path, and be merged with others of its size once
// there are bm25.MergeFactor of them; it stays on the heap, and the
// debounced writer writes it, as before.
//
// When nothing is flushed, and the segments stay on the heap as before:
// --no-cache; a cache folder that cannot be used (read-only, full, another
// user's: Open said it); an entry another process writes (this one reads
// it, and writes nothing until it takes the lock over). A write that fails
// (a full disk) leaves that segment on the heap, said once.
//
// A flushed segment's mapping lives until the index closes, like the
// restored segments' (persist.go): a search holds no reference count, and
// hits, masked texts and record pages may point into a segment after the
// update that merged it away. Its file is removed at the merge's swap
// (DropReplaced; or at the next commit), while its mapping lives on, so a
// merged-away segment holds its disk blocks until the index closes: after
// a first indexing the merges (bm25.MergePolicy) write each batch again
// about once, so the entry's folder holds up to twice its bytes until then.

import (
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"runls/internal/store"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// flushMinDocs is the fewest pieces of a segment flushed as it is made:
// a smaller one is left to the debounced writer.
const flushMinDocs = bm25.SmallSegmentDocs

// Flushes reports whether segments are flushed as they are made: the entry
// is this process's to write.
func (w *Writer) Flushes() bool { return w != nil && w.entry.Writable() }

// flush writes s to the entry and gives the segment read back from the
// blob's mapping with its blob, or nil when it is not flushed (see the
// file's comment). The caller registers it (keep).
func (w *Writer) flush(s *corpus.Segment, convs, files uint32) (*corpus.Segment, store.BlobRef) {
	if !w.Flushes() || s.Docs() < w.flushDocs {
		return nil, store.BlobRef{}
	}
	bufp, _ := w.flushBufs.Get().(*[]byte)
	if bufp == nil {
		bufp = new([]byte)
	}
	// Made once at about the blob's size: grown by doubling (the pool is
	// emptied by collections, so most flushes start anew), its copies took
	// three quarters of the encoding's CPU at 1 GB.
	*bufp = EncodeSegment(slices.Grow((*bufp)[:0], encodedSizeHint(s)), s)
	// Unsynced: the first indexing does not wait for the disk on each
	// segment; the commit naming it makes it durable first.
	ref, err := w.writeBlob(*bufp, false)
	w.flushBufs.Put(bufp)
	if err != nil {
		w.host.Warn("cache-flush", "cannot write a segment to the cache entry; it is kept in memory", zap.String("entry", w.entry.Dir()), zap.Error(err))
		return nil, store.BlobRef{}
	}
	mapped, blob, err := w.mapSegment(ref, convs, files)
	if err == nil {
		err = mapped.SetDeadBits(s.DeadBits())
	}
	if err != nil {
		if blob != nil {
			blob.Close()
		}
		w.entry.Discard(ref)
		w.host.Warn("cache-flush", "cannot read back a segment written to the cache entry; it is kept in memory", zap.String("entry", w.entry.Dir()), zap.Error(err))
		return nil, store.BlobRef{}
	}
	w.mu.Lock()
	w.flushed = append(w.flushed, blob)
	w.mu.Unlock()
	w.guard.watchBlob(w.entry.Dir(), blob)
	return mapped, ref
}

// encodedSizeHint is about the bytes of s's blob: its slices' bytes and
// some for the sections' headers and alignment.
func encodedSizeHint(s *corpus.Segment) int {
	f := s.Footprint()
	return int(f.Postings+f.Columns+f.Terms+s.Columns.ColumnBytes()) + 64<<10
}

// mapSegment maps a flushed blob and decodes its segment from the mapping,
// inside the blob's Access so that a cut file is an error here.
func (w *Writer) mapSegment(ref store.BlobRef, convs, files uint32) (*corpus.Segment, *store.Blob, error) {
	blob, err := w.entry.MapBlob(ref)
	if err != nil {
		return nil, nil, err
	}
	var s *corpus.Segment
	err = blob.Access(func(b []byte) (err error) {
		s, err = DecodeSegment(b, convs, files)
		return err
	})
	if err != nil {
		blob.Close()
		return nil, nil, err
	}
	return s, blob, nil
}

// FlushBuilt flushes a batch's segment, or a merge's output, before its
// commit, outside the index's locks: workers write their batches side by
// side. Its blob is
// known to the writer from then on (a commit under way meanwhile does not
// name it: the segment is not the index's yet). The blob's ref is the
// zero one when s was not flushed; DiscardBuilt takes it.
func (w *Writer) FlushBuilt(s *corpus.Segment) (*corpus.Segment, store.BlobRef) {
	if w == nil {
		return s, store.BlobRef{}
	}
	convs, files := w.idBounds()
	mapped, ref := w.flush(s, convs, files)
	if mapped == nil {
		return s, store.BlobRef{}
	}
	w.mu.Lock()
	w.segBlobs[mapped] = ref
	w.mu.Unlock()
	return mapped, ref
}

// DiscardBuilt removes the blob FlushBuilt wrote for s when s never became
// the index's (a merge whose sources were forgotten before its swap), by
// the ref FlushBuilt gave, not by the writer's blobs: a dropped entry
// (DropMapping) has forgotten those meanwhile, and the file would stay in
// the folder until a later writer's cleanup. A zero ref does nothing; a
// committed blob is never removed (Entry.Discard).
func (w *Writer) DiscardBuilt(s *corpus.Segment, ref store.BlobRef) {
	if w == nil || ref.Name == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.segBlobs, s)
	w.entry.Discard(ref)
}

// idBounds are how many conversation and file ids the index has given: a
// segment read back is checked against them.
func (w *Writer) idBounds() (convs, files uint32) {
	convs = w.host.State.Convs.Len()
	w.host.Mu.RLock()
	files = w.host.State.NextID
	w.host.Mu.RUnlock()
	return convs, files
}

// DropReplaced forgets the blobs of the segments a merge replaced, once
// the index has the merge's output (flushed by FlushBuilt before it was
// the index's, as a batch's), and removes those no commit names. A search
// that still reads a replaced segment reads its mapping, which lives until
// the index closes.
func (w *Writer) DropReplaced(inputs []*corpus.Segment) {
	if w != nil {
		w.dropBlobs(inputs)
	}
}

// dropBlobs forgets the blobs of segments a merge replaced, and removes
// those no commit names. Under the writer's lock: a commit under way names
// the segments it copied before the merge, and must find their blobs.
func (w *Writer) dropBlobs(segs []*corpus.Segment) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range segs {
		if ref, ok := w.segBlobs[s]; ok {
			delete(w.segBlobs, s)
			w.entry.Discard(ref)
		}
	}
}

// watchBlob adds a flushed blob's file to those watched for a cut, and its
// mapping to those whose faults are the entry's corruption.
func (g *mappingGuard) watchBlob(dir string, blob *store.Blob) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.watchFile(filepath.Join(dir, blob.Ref().Name)) {
		return
	}
	g.mapped = append(g.mapped, blob) // a fault on its pages is the entry's (fault.go)
}
