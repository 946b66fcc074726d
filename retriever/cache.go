package retriever

// This file holds the index's cache entry (spec §15, issue 18): which entry
// a configuration names, opening it (one writer; a second process reads)
// and restoring its last commit (persist.go), and the writes of the index,
// debounced after the first indexing and made by a goroutine of their own,
// never by a search: the state, dictionary and statistics each time, and
// the segments not written before (a segment's blob is written once; its
// dead bits are the state's).

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"runls/internal/store"
	"runls/masking"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
)

// cacheFormat is the persisted index's format version, part of every
// entry's configuration: a runls that indexes, parses or masks differently,
// or lays the entry out differently, bumps it, and its entries are others.
const cacheFormat = 3 // 3: pieces' keys leave surrounding white space out

const (
	// cacheWriteDelay is how long after the last change the entry is
	// written: a burst of appends makes one write.
	cacheWriteDelay = 2 * time.Second
	// cacheWriteMaxDelay bounds the wait while changes keep coming.
	cacheWriteMaxDelay = 30 * time.Second
	// cacheWriteGap is the fewest delays between two writes.
	cacheWriteGap = 5
)

// cacheConfig is the configuration an entry is for: the format version,
// masking and the interpreter's rules (spec §15). It is plain text, which
// `runls cache list` shows.
func cacheConfig(opts Options) []byte {
	mask := "off"
	if opts.Masker != nil && opts.Masker != masking.NoOp() {
		t := fmt.Sprintf("%T", opts.Masker) // *masking.hidingOutside
		mask = t[strings.LastIndexByte(t, '.')+1:]
	}
	rules := "none"
	if in := opts.Interpreter; in != nil {
		sum := sha256.Sum256(in.source)
		rules = fmt.Sprintf("%d rules sha256:%x", len(in.rules), sum[:8])
	}
	// The blobs are the machine's raw values (persist_codec.go): an entry
	// is for one architecture.
	return fmt.Appendf(nil, "format %d; %s; masking %s; interpreter %s", cacheFormat, runtime.GOARCH, mask, rules)
}

// cacheWriter writes the index's entry.
type cacheWriter struct {
	ix    *Index
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
	written  uint64     // ix.commits at the last write
	readOnly bool       // said once: another process writes the entry

	segBlobs map[*corpus.Segment]store.BlobRef // segments written, flushed or restored, by the write's lock
	restored *store.Snapshot                   // the commit the index was restored from: its segments map it
	flushed  []*store.Blob                     // blobs of segments flushed as they were made (flush.go): they map them
	guard    mappingGuard                      // their files, watched for a cut (persist.go)
}

// openCache opens the entry of ix's run and configuration, or gives nil
// (said in the log) when the cache cannot be used.
func (ix *Index) openCache(opts Options) *cacheWriter {
	root := opts.Cache.Root
	if root == nil || !ix.IsRunFolder() {
		return nil // no entry for a folder that holds no run (yet)
	}
	entry, err := root.Open(ix.root, cacheConfig(opts), store.Options{MaxBytes: opts.Cache.MaxBytes, Verify: store.VerifyFull})
	if err != nil {
		ix.log.Warn("the cache is not used", zap.Error(err))
		return nil
	}
	if rep := entry.Report(); rep != nil {
		if rep.Dropped() {
			ix.log.Warn("dropped a damaged cache entry; the run is indexed afresh", zap.Error(rep))
		} else {
			ix.log.Info("mended the cache entry", zap.Error(rep))
		}
	}
	w := &cacheWriter{ix: ix, entry: entry, poke: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), delay: cacheWriteDelay,
		segBlobs: map[*corpus.Segment]store.BlobRef{}}
	if opts.cacheDelay > 0 {
		w.delay = opts.cacheDelay
	}
	w.flushDocs = cmp.Or(opts.flushDocs, flushMinDocs)
	w.restore()
	go w.run()
	return w
}

// restore puts the entry's last commit back into the index; a commit that
// cannot be used is dropped with one WARN, and the run indexed afresh.
func (w *cacheWriter) restore() {
	snap, err := w.entry.Snapshot()
	if err != nil {
		w.ix.log.Warn("dropped a damaged cache entry; the run is indexed afresh", zap.Error(err))
	}
	if snap == nil {
		return
	}
	refs, err := w.restoreIndex(snap)
	if err != nil {
		snap.Close()
		w.ix.log.Warn("dropped a cache entry that cannot be read; the run is indexed afresh", zap.String("entry", w.entry.Dir()), zap.Error(err))
		return
	}
	w.restored, w.segBlobs = snap, refs
	w.guard.watch(w.entry.Dir(), snap)
}

// changed tells the writer that an update committed.
func (w *cacheWriter) changed() {
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
func (w *cacheWriter) run() {
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
				w.ix.update(w.stopping(), nil)
			}
			last = time.Now()
		}
	}
}

// write commits the file table when the index changed since the last write
// and has been indexed once. A reader (another process writes the entry)
// tries to become the writer, and writes nothing until it is.
func (w *cacheWriter) write() {
	w.mu.Lock()
	defer w.mu.Unlock()
	ix := w.ix
	if !ix.indexed.Load() {
		return
	}
	commits := ix.state.Commits.Load()
	if commits == w.written {
		return
	}
	if !w.entry.Writable() {
		ok, err := w.entry.Upgrade()
		if err != nil || !ok {
			if !w.readOnly {
				w.readOnly = true
				ix.log.Info("another runls writes this run's cache entry; this one writes none", zap.String("entry", w.entry.Dir()), zap.Error(err))
			}
			return
		}
	}
	err := w.commit()
	if err != nil && !errors.Is(err, store.ErrReadOnly) {
		// Blobs another writer removed since (this process was a reader):
		// the next write writes every segment.
		clear(w.segBlobs)
		ix.once.warn("cache-write", "cannot write the cache entry; the index is kept in memory only", zap.String("entry", w.entry.Dir()), zap.Error(err))
		return
	}
	w.written = commits
}

// commit writes the index's committed state: its state, dictionary and
// statistics encoded under the read lock (searches go on; an update's
// commit waits for the copy), then the segments not yet written, from the
// immutable segments outside the lock, and the commit naming them all.
func (w *cacheWriter) commit() error {
	st, state, dict, stats, segs := w.encodeCommitted()
	records := make([]store.FileRecord, len(st.Files))
	for i, fs := range st.Files {
		records[i] = persist.FileRecord(fs)
	}
	table, err := store.EncodeFileTable(records)
	if err != nil {
		return err
	}
	refs := make([]store.BlobRef, 0, blobSegments+len(segs))
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
			buf = persist.EncodeSegment(buf[:0], s)
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

// writeBlob writes b as a new blob of the entry; synced false leaves its
// fsync to the commit that names it (store.BlobWriter.CommitUnsynced).
func (w *cacheWriter) writeBlob(b []byte, synced bool) (store.BlobRef, error) {
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

// close stops the writer, writes what changed since its last write, and
// releases the entry.
func (w *cacheWriter) close() error {
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
		// Last: the segments map them.
		if w.restored != nil {
			err = errors.Join(err, w.restored.Close())
		}
		for _, b := range w.flushed {
			err = errors.Join(err, b.Close())
		}
	})
	return err
}
