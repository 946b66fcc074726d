package persist

// This file holds the writer of the index's cache entry (spec §15, issue
// 18): opened on the entry the retriever's configuration names (one writer;
// a second process reads), it restores the entry's last commit
// (persist.go), and makes the writes of the index,
// debounced after the first indexing and made by a goroutine of their own,
// never by a search: the state, dictionary and statistics each time, and
// the segments not written before (a segment's blob is written once; its
// dead bits are the state's).

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
)

const (
	// cacheWriteDelay is how long after the last change the entry is
	// written: a burst of appends makes one write.
	cacheWriteDelay = 2 * time.Second
	// cacheWriteMaxDelay bounds the wait while changes keep coming.
	cacheWriteMaxDelay = 30 * time.Second
	// cacheWriteGap is the fewest delays between two writes.
	cacheWriteGap = 5
)

// Writer writes the index's entry.
type Writer struct {
	host  Host
	entry *store.Entry
	poke  chan struct{} // a change was committed
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	delay time.Duration // cacheWriteDelay, or a test's
	// flushDocs is the fewest pieces of a segment flushed as it is made
	// (flush.go): flushMinDocs, or a test's.
	flushDocs int
	// flushBufs are the encoding buffers of flushes under way (a batch's
	// segment encodes to some 10-20 MB at the default batch size), kept
	// for the next flush rather than made anew.
	flushBufs sync.Pool

	mu       sync.Mutex // one write at a time: the goroutine's, or Close's
	written  uint64     // the state's Commits at the last write
	readOnly bool       // said once: another process writes the entry

	segBlobs  map[*corpus.Segment]store.BlobRef // segments written, flushed or restored, by the write's lock
	restored  *store.Snapshot                   // the commit the index was restored from: its segments map it
	validated int                               // paths the restore checked as if from outside (StateBlob.pathWritten)
	cols      *mappedColumns                    // its files' columns, read in place (inplace.go)
	flushed   []*store.Blob                     // blobs of segments flushed as they were made (flush.go): they map them
	guard     mappingGuard                      // their files, watched for a cut (persist.go)
}

// Host is the index a Writer keeps the entry of: its lock and committed
// state, and what the writer asks of it.
type Host struct {
	Mu        *sync.RWMutex // the index's lock, over State
	State     *corpus.State
	RefreshMu *sync.Mutex  // one update at a time
	Indexed   *atomic.Bool // a first full update has finished
	Log       *zap.Logger
	Warn      func(key, msg string, fields ...zap.Field) // said once a key
	Rules     FileRules                                  // to make file states of the restored state
	// Forget drops every file and segment of the index, as a new index:
	// its next update reads the run afresh. The caller holds RefreshMu.
	Forget func()
	// Reindex brings the index up to date (after a fault on the writer's
	// goroutine, where no request may come to do it).
	Reindex func(ctx context.Context)
}

// WriterOptions are a writer's timings; zero values take the defaults.
type WriterOptions struct {
	Delay     time.Duration // after the last change (cacheWriteDelay)
	FlushDocs int           // the fewest pieces of a segment flushed as it is made (flushMinDocs)
}

// Open makes the writer of entry for host: it restores the entry's last
// commit into the host's state and starts writing its commits.
func Open(entry *store.Entry, host Host, o WriterOptions) *Writer {
	w := &Writer{host: host, entry: entry, poke: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		delay: cmp.Or(o.Delay, cacheWriteDelay), flushDocs: cmp.Or(o.FlushDocs, flushMinDocs),
		segBlobs: map[*corpus.Segment]store.BlobRef{}}
	w.restore()
	go w.run()
	return w
}

// restore puts the entry's last commit back into the index; a commit that
// cannot be used is dropped with one WARN, and the run indexed afresh.
func (w *Writer) restore() {
	snap, err := w.entry.Snapshot()
	if err != nil {
		w.host.Log.Warn("dropped a damaged cache entry; the run is indexed afresh", zap.Error(err))
	}
	if snap == nil {
		return
	}
	refs, err := w.restoreIndex(snap)
	if err != nil {
		snap.Close()
		w.host.Log.Warn("dropped a cache entry that cannot be read; the run is indexed afresh", zap.String("entry", w.entry.Dir()), zap.Error(err))
		return
	}
	w.restored, w.segBlobs = snap, refs
	w.guard.watch(w.entry.Dir(), snap)
}

// Changed tells the writer that an update committed.
func (w *Writer) Changed() {
	if w == nil {
		return
	}
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// run writes the entry w.delay after the last change, and at most
// cacheWriteMaxDelay after the first unwritten one, but no sooner than
// cacheWriteGap delays after its last write: on 100,000 files the table is
// some 7 MB, and a run an agent appends to every second must not cost a
// write and an fsync every few seconds.
func (w *Writer) run() {
	defer close(w.done)
	var timer <-chan time.Time
	var first, last time.Time
	for {
		select {
		case <-w.stop:
			return
		case <-w.poke:
			now := time.Now()
			if timer == nil {
				first = now
			}
			wait := min(w.delay, first.Add(cacheWriteMaxDelay).Sub(now))
			wait = max(wait, last.Add(cacheWriteGap*w.delay).Sub(now), 0)
			timer = time.After(wait)
		case <-timer:
			timer = nil
			if w.writeGuarded() {
				w.host.Reindex(w.stopping())
			}
			last = time.Now()
		}
	}
}

// write commits the file table when the index changed since the last write
// and has been indexed once. A reader (another process writes the entry)
// tries to become the writer, and writes nothing until it is.
func (w *Writer) write() {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.host
	if !h.Indexed.Load() {
		return
	}
	commits := h.State.Commits.Load()
	if commits == w.written {
		return
	}
	if !w.entry.Writable() {
		ok, err := w.entry.Upgrade()
		if err != nil || !ok {
			if !w.readOnly {
				w.readOnly = true
				h.Log.Info("another runls writes this run's cache entry; this one writes none", zap.String("entry", w.entry.Dir()), zap.Error(err))
			}
			return
		}
	}
	err := w.commit()
	if err != nil && !errors.Is(err, store.ErrReadOnly) {
		// Blobs another writer removed since (this process was a reader):
		// the next write writes every segment.
		clear(w.segBlobs)
		h.Warn("cache-write", "cannot write the cache entry; the index is kept in memory only", zap.String("entry", w.entry.Dir()), zap.Error(err))
		return
	}
	w.written = commits
}

// commit writes the index's committed state: its state, dictionary and
// statistics encoded under the read lock (searches go on; an update's
// commit waits for the copy), then the segments not yet written, from the
// immutable segments outside the lock, and the commit naming them all.
func (w *Writer) commit() error {
	defer liftMemory(w.files())()
	st, state, dict, stats, segs := w.encodeCommitted()
	records := make([]store.FileRecord, len(st.Files))
	for i, fs := range st.Files {
		records[i] = FileRecord(fs)
	}
	table, err := store.EncodeFileTable(records)
	if err != nil {
		return err
	}
	refs := make([]store.BlobRef, 0, BlobSegments+len(segs))
	for _, b := range [][]byte{state, dict, stats} {
		ref, err := w.writeBlob(b, true)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	written := map[*corpus.Segment]store.BlobRef{}
	var buf []byte
	for _, s := range segs {
		ref, ok := w.segBlobs[s]
		if !ok {
			buf = EncodeSegment(buf[:0], s)
			if ref, err = w.writeBlob(buf, true); err != nil {
				return err
			}
			written[s] = ref
		}
		refs = append(refs, ref)
	}
	snap, err := w.entry.Commit(refs, table)
	if err != nil {
		return err
	}
	// Segments merged away leave w.segBlobs as they go (dropBlobs), not
	// here: a segment flushed while this commit was written is not in segs,
	// and its blob must stay known.
	maps.Copy(w.segBlobs, written)
	return snap.Close()
}

// files returns how many files the index holds.
func (w *Writer) files() int {
	w.host.Mu.RLock()
	defer w.host.Mu.RUnlock()
	return len(w.host.State.Files)
}

// writeBlob writes b as a new blob of the entry; synced false leaves its
// fsync to the commit that names it (store.BlobWriter.CommitUnsynced).
func (w *Writer) writeBlob(b []byte, synced bool) (store.BlobRef, error) {
	bw, err := w.entry.CreateBlob()
	if err != nil {
		return store.BlobRef{}, err
	}
	if _, err := bw.Write(b); err != nil {
		bw.Abort()
		return store.BlobRef{}, err
	}
	if !synced {
		return bw.CommitUnsynced()
	}
	return bw.Commit()
}

// Close stops the writer, writes what changed since its last write, and
// releases the entry.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	var err error
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.writeGuarded()
		err = w.entry.Close()
		w.guard.close()
		w.cols.close()
		// Last: the segments and the files' columns map them.
		if w.restored != nil {
			err = errors.Join(err, w.restored.Close())
		}
		for _, b := range w.flushed {
			err = errors.Join(err, b.Close())
		}
	})
	return err
}
