package persist

// This file holds the persisted index's view of an index (spec §15, issue
// 18): the committed state taken whole for the cache's writer (writer.go),
// and put back at open from the entry's last commit.
//
// A commit's blobs, in the manifest's order: the state (persist_codec.go),
// the dictionary, the statistics, then the segments in the index's order
// (segment_codec.go); the caller section is the file table (filetable.go),
// which `runls cache list` reads without the blobs.
//
// Reopening is restoring, then the ordinary update: the committed file
// states come back whole (their head and window bytes, parser state and
// pending tail), the segments mapped, and the first Refresh plans every
// file exactly as following does (the retriever's follow.go, §7 and §15): a file whose
// identity, size, times (modification and inode change) match and whose
// time is outside the racy window of its read is not read; one that grew
// is read from its commit position with the stored parser state, after the
// same head and window check following makes; anything else has its old
// pieces dropped and is read again. One set of rules, not two.
//
// Checks (check.go): the entry is opened checking its structure
// (store.VerifyFrame), the dictionary and statistics are checked whole as
// they are read, the state's sections by range as they are read (its
// files' line indexes and record tables at a file's first use,
// inplace.go), and each segment's bytes by range at their first use, so
// that a flipped byte inside a segment's postings (which the decoders do
// not check value by value) is never an answer, and a reopen
// reads the pages its first answer needs, not the whole entry. A range
// found bad at a search is the entry's corruption, taken as a fault on its
// mapping is (fault.go): dropped, said once, and the answer made again from
// the run indexed afresh.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"runls/internal/store"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// The commit's first blobs; the segments follow.
const (
	BlobState = iota
	BlobDict
	BlobStats
	BlobSegments
)

// encodeCommitted encodes the committed state for the writer under the
// read lock (searches go on; an update's commit waits for the copy),
// released by a defer: the dictionary and statistics it encodes may be
// mapped, and a fault reading them (fault.go) must not leave it held.
func (w *Writer) encodeCommitted() (st *Saved, state, dict, stats []byte, segs []*corpus.Segment) {
	w.host.Mu.RLock()
	defer w.host.Mu.RUnlock()
	st, place := Save(w.host.State)
	return st, EncodeState(nil, st, place), w.host.State.Dict.AppendEncoded(nil), w.host.State.Stats.AppendEncoded(nil), slices.Clone(w.host.State.Segments)
}

// restoreIndex puts back the state snap holds, before the index's first update;
// it gives the restored segments with their blobs, for the writer to keep.
// Each blob is decoded inside its Access, so that a page cut under the
// mapping is an error here, not a crash.
func (w *Writer) restoreIndex(snap *store.Snapshot) (map[*corpus.Segment]store.BlobRef, error) {
	blobs := snap.Blobs()
	if len(blobs) < BlobSegments {
		return nil, fmt.Errorf("%w: a commit of %d blobs", store.ErrCorrupt, len(blobs))
	}
	var st *StateBlob
	var dict *bm25.Dict
	var stats *bm25.Stats
	var segs []*corpus.Segment
	var refs map[*corpus.Segment]store.BlobRef
	var files []*corpus.File
	// The state is decoded from its mapping inside its Access, with
	// everything made of it, each section it reads checked by range first
	// (its chunks: check.go); the files' line indexes and record tables
	// stay in the mapping, unchecked and unread, until their first use
	// (inplace.go). The pages read are let go after: the files keep copies
	// of what else they hold.
	state := blobs[BlobState]
	err := state.Access(func(b []byte) error {
		return decodeChecked(func() error {
			var err error
			if st, err = decodeState(b, newBlobBacking(snap, state, b), snap); err != nil {
				return err
			}
			segs, refs, files, dict, stats, err = w.restoreFrom(snap, st)
			return err
		})
	})
	state.DropPages()
	if err != nil {
		return nil, err
	}
	w.cols, w.validated = st.cols, st.validated

	w.host.Mu.Lock()
	defer w.host.Mu.Unlock()
	w.host.State.Seed = st.Seed
	w.host.State.Dict, w.host.State.Stats, w.host.State.NextID = dict, *stats, st.NextID
	w.host.State.Agents = st.Agents
	w.host.State.AgentIDs = make(map[string]uint32, len(st.Agents))
	for i, a := range st.Agents {
		w.host.State.AgentIDs[a] = uint32(i)
	}
	if len(st.Agents) > 0 {
		w.host.State.Stats.Grow(uint32(len(st.Agents) - 1))
	}
	w.host.State.Episodes = make(map[string]bool, len(st.Episodes))
	for _, ep := range st.Episodes {
		w.host.State.Episodes[ep] = true
	}
	w.host.State.SetSegments(segs)
	w.host.State.ByID = make([]*corpus.File, st.NextID)
	if len(w.host.State.Files) == 0 {
		// Sized once: grown insert by insert, the map's rehashing was a
		// sixth of the restore at 100,000 files.
		w.host.State.Files = make(map[string]*corpus.File, len(files))
	}
	for _, fs := range files {
		// Checked when read: a time within the racy window of the read is
		// checked again at the first update, as following does.
		fs.CheckedAt = fs.ReadAt
		w.host.State.Files[fs.Rel] = fs
		w.host.State.ByID[fs.ID] = fs
	}
	// The files' keys (corpus/filekeys.go), from files in the blob's order.
	w.host.State.RestoreKeys(files)
	w.host.State.Convs.Restore(st.Convs)
	return refs, nil
}

// restoreFrom reads the dictionary, the statistics and the segments of
// snap, and makes the file states of st, the decoded state blob.
func (w *Writer) restoreFrom(snap *store.Snapshot, st *StateBlob) (segs []*corpus.Segment, refs map[*corpus.Segment]store.BlobRef, files []*corpus.File, dict *bm25.Dict, stats *bm25.Stats, err error) {
	blobs := snap.Blobs()
	if len(st.Convs) < 2 || st.Convs[0] != "" || st.Convs[1] != "-" {
		err = fmt.Errorf("state blob: conversations or agents")
		return
	}
	segs = make([]*corpus.Segment, len(blobs)-BlobSegments)
	refs = make(map[*corpus.Segment]store.BlobRef, len(segs))
	if len(st.Dead) != len(segs) {
		err = fmt.Errorf("state blob: dead bits of %d segments for %d", len(st.Dead), len(segs))
		return
	}
	// The dictionary and statistics are mapped and checked whole before
	// they are read (an entry opened checking its structure only,
	// store.VerifyFrame, checks each blob before its first use: check.go),
	// while the segments are decoded: from a cold page cache both wait for
	// the disk (at 10 GB the dictionary is 137 MB), and their waits overlap.
	var tables error
	done := make(chan struct{})
	go func() {
		defer close(done)
		tables = errors.Join(
			checkThen(blobs[BlobDict], func(b []byte) (err error) { dict, err = bm25.DecodeDict(b); return err }),
			checkThen(blobs[BlobStats], func(b []byte) (err error) { stats, err = bm25.DecodeStats(b); return err }),
		)
	}()
	errs := w.decodeSegments(snap, st, segs)
	<-done
	if err = tables; err != nil {
		return
	}
	if stats.Parts() > len(st.Agents) {
		err = fmt.Errorf("state blob: conversations or agents")
		return
	}
	for i, blob := range blobs[BlobSegments:] {
		if errs[i] != nil {
			err = fmt.Errorf("segment %d: %w", i, errs[i])
			return
		}
		refs[segs[i]] = blob.Ref()
	}
	files, err = st.FileStates(segs, dict.Len(), w.host.Rules)
	return
}

// decodeSegments decodes the segment blobs of snap into segs, each
// lazily: the headers and small columns now, each term's and piece's
// values at their first use, checked then (check.go). Several at once:
// from a cold page cache each segment's checks wait for the disk (a few
// hundred KB a segment, in requests of 64 KB chunks), and at 10 GB (250
// segments) one after the other they were most of a CLI reopen's second.
// It gives each segment's error.
func (w *Writer) decodeSegments(snap *store.Snapshot, st *StateBlob, segs []*corpus.Segment) []error {
	blobs := snap.Blobs()[BlobSegments:]
	errs := make([]error, len(segs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(segmentDecoders, len(segs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				blob := blobs[i]
				errs[i] = blob.Access(func(b []byte) error {
					return decodeChecked(func() error {
						s, err := DecodeSegmentLazy(b, uint32(len(st.Convs)), st.NextID, newBlobBacking(snap, blob, b))
						if err == nil {
							err = s.SetDeadBits(st.Dead[i])
						}
						segs[i] = s
						return err
					})
				})
			}
		}()
	}
	for i := range segs {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// segmentDecoders is how many segments a restore decodes at once: their
// waits for the disk overlap (the decoding itself is light).
const segmentDecoders = 8

// checkThen runs fn on blob's content once the whole blob is checked.
func checkThen(blob *store.Blob, fn func(b []byte) error) error {
	if err := blob.Check(); err != nil {
		return err
	}
	return blob.Access(fn)
}

// A mapped blob's file cut by someone else (the store never writes into a
// blob) makes a read of a page past its new end raise SIGBUS. Most cuts are
// found before anything reads the mapping: each update and each search
// first asks whether any watched file changed since the last look (one
// read of an inotify instance, cutwatch_linux.go, from the guard's
// watchAfterChecks-th check on; a truncate queues its event before it
// returns), and only then compares the blobs' sizes (an fstat each on a
// descriptor kept open: 27% of a rare word's engine time on a 1 GB run's
// 38 files when done every request) with those they were mapped at; a cut
// one drops the entry (dropMapping, fault.go) before the request reads it.
// A cut between that check and a read is caught as the fault it raises
// (fault.go); both go the same way, said once.
type mappingGuard struct {
	mu      sync.Mutex
	files   []*os.File
	sizes   []int64
	mapped  []faultOwner // whose mappings the index reads: a fault on one is corruption
	cut     bool         // found once: the index no longer reads the mapping
	changes cutWatch     // whether files may have changed since check's last stat
	checks  int          // checks made, up to watchAfterChecks: the watch starts there

	dropMu    sync.Mutex // one drop; others wait for it
	dropped   bool
	forgotten atomic.Bool // dropped, and every restored file forgotten

	afterCheck func(point string) // fault injection (fault.go)
}

// watch opens the files of snap's blobs in dir, and takes a fault on its
// mappings for corruption.
func (g *mappingGuard) watch(dir string, snap *store.Snapshot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mapped = append(g.mapped, snap)
	for _, b := range snap.Blobs() {
		g.watchFile(filepath.Join(dir, b.Ref().Name))
	}
	if injectFaults != nil && g.afterCheck == nil {
		injectFaults(g)
	}
}

// watchAfterChecks is the check at which the guard starts watching its
// files for changes; the checks before it stat every file. A process that
// asks a few times only (the CLI's one search) so never makes the inotify
// instance, whose close waits for the kernel to let go of its watches: 7.7
// ms of a 1 GB `runls search` reopen's 50, at its exit.
const watchAfterChecks = 4

// check reports a blob's file shorter than when it was mapped, once.
func (g *mappingGuard) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cut || len(g.files) == 0 {
		return nil
	}
	switch g.checks++; {
	case g.checks == watchAfterChecks:
		// Watched before their sizes are compared below: a cut after its
		// watch is a pending change, one before it is seen now.
		for _, f := range g.files {
			g.changes.add(f)
		}
	case g.checks > watchAfterChecks:
		g.checks = watchAfterChecks + 1
		if !g.changes.changed() {
			return nil
		}
	}
	for i, f := range g.files {
		info, err := f.Stat()
		if err == nil && info.Size() < g.sizes[i] {
			g.cut = true
			return fmt.Errorf("%w: %s cut from %d to %d bytes under the running index", store.ErrCorrupt, filepath.Base(f.Name()), g.sizes[i], info.Size())
		}
	}
	return nil
}

func (g *mappingGuard) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.files {
		f.Close()
	}
	g.changes.close()
	g.files, g.sizes, g.mapped = nil, nil, nil
}

// watchFile opens the blob file at path and takes its size, the one its
// mapping was made at; g.mu is held. Its change watch, once the guard
// watches (check), is added before the size is taken, so a cut after it is
// a pending change. A file removed since (a commit of another writer) is
// skipped: the mapping holds its pages. It reports whether the file is
// watched.
func (g *mappingGuard) watchFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	if g.checks >= watchAfterChecks {
		g.changes.add(f)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return false
	}
	g.files, g.sizes = append(g.files, f), append(g.sizes, info.Size())
	return true
}

// CheckMapping drops the restored state when a blob it maps was cut; point
// names the caller for fault injection. The caller must not hold refreshMu.
// Flushed segments' blobs are watched too (flush.go), so it runs without a
// restored commit as well.
func (w *Writer) CheckMapping(point string) {
	if w == nil {
		return
	}
	if err := w.guard.check(); err != nil {
		w.DropMapping(err)
		return
	}
	w.guard.inject(point)
}
