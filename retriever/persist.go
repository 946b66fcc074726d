package retriever

// This file holds the persisted index's view of an index (spec §15, issue
// 18): the committed state taken whole for the cache's writer (cache.go),
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
// file exactly as following does (follow.go, §7 and §15): a file whose
// identity, size, times (modification and inode change) match and whose
// time is outside the racy window of its read is not read; one that grew
// is read from its commit position with the stored parser state, after the
// same head and window check following makes; anything else has its old
// pieces dropped and is read again. One set of rules, not two.
//
// Checks: the entry is opened with store.VerifyFull, so every blob's
// CRC-32C is checked before a byte of it is used: a flipped byte inside a
// segment's postings (which the decoders do not check value by value) is
// then never an answer. It costs one pass over the entry at memory speed
// (the figures are in the README's cache section); checking at first use
// instead would leave a search to find it, half-way through an answer.

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"runls/internal/store"
	"runls/retriever/internal/bm25"
)

// The commit's first blobs; the segments follow.
const (
	blobState = iota
	blobDict
	blobStats
	blobSegments
)

// savedState is the committed state as the state blob holds it, and each
// segment's place in it. The caller holds the index's read lock: the dead
// bits are copied under it, as Kill writes them under the write lock.
func (c *committed) savedState() (*savedIndex, map[*segment]uint32) {
	st := &savedIndex{
		seed:     c.seed,
		nextID:   c.nextID,
		agents:   slices.Clone(c.agents),
		episodes: slices.Sorted(maps.Keys(c.episodes)),
		dead:     make([][]uint64, len(c.segments)),
		files:    slices.Collect(maps.Values(c.files)),
	}
	place := make(map[*segment]uint32, len(c.segments))
	for i, s := range c.segments {
		place[s] = uint32(i)
		st.dead[i] = slices.Clone(s.DeadBits())
	}
	slices.SortFunc(st.files, func(a, b *fileState) int { return cmp.Compare(a.rel, b.rel) })
	st.convs = c.convs.Names()
	return st, place
}

// encodeCommitted encodes the committed state for the writer under the
// read lock (searches go on; an update's commit waits for the copy),
// released by a defer: the dictionary and statistics it encodes may be
// mapped, and a fault reading them (fault.go) must not leave it held.
func (w *cacheWriter) encodeCommitted() (st *savedIndex, state, dict, stats []byte, segs []*segment) {
	w.ix.mu.RLock()
	defer w.ix.mu.RUnlock()
	st, place := w.ix.savedState()
	return st, encodeState(nil, st, place), w.ix.dict.AppendEncoded(nil), w.ix.stats.AppendEncoded(nil), slices.Clone(w.ix.segments)
}

// restoreIndex puts back the state snap holds, before the index's first update;
// it gives the restored segments with their blobs, for the writer to keep.
// Each blob is decoded inside its Access, so that a page cut under the
// mapping is an error here, not a crash.
func (w *cacheWriter) restoreIndex(snap *store.Snapshot) (map[*segment]store.BlobRef, error) {
	blobs := snap.Blobs()
	if len(blobs) < blobSegments {
		return nil, fmt.Errorf("%w: a commit of %d blobs", store.ErrCorrupt, len(blobs))
	}
	var st *stateBlob
	var dict *bm25.Dict
	var stats *bm25.Stats
	err := errors.Join(
		// The state is read from a copy on the heap: its files' head, window,
		// line index and record table are read by every request and update
		// (records, outlines, a file's rewrite check), which a cut blob must
		// never fault; only the segments, the dictionary and the statistics
		// are read in place, by searches and updates that check the files
		// first (mappingGuard).
		// (read from the blob's file, not copied from its mapping, whose
		// pages would stay the process's: some 90 MB at 1 GB)
		func() error {
			b, err := blobs[blobState].ReadAll()
			if err == nil {
				st, err = decodeState(b)
			}
			return err
		}(),
		blobs[blobDict].Access(func(b []byte) (err error) { dict, err = bm25.DecodeDict(b); return err }),
		blobs[blobStats].Access(func(b []byte) (err error) { stats, err = bm25.DecodeStats(b); return err }),
	)
	if err != nil {
		return nil, err
	}
	if len(st.convs) < 2 || st.convs[0] != "" || st.convs[1] != "-" || stats.Parts() > len(st.agents) {
		return nil, fmt.Errorf("state blob: conversations or agents")
	}
	segs := make([]*segment, len(blobs)-blobSegments)
	refs := make(map[*segment]store.BlobRef, len(segs))
	if len(st.dead) != len(segs) {
		return nil, fmt.Errorf("state blob: dead bits of %d segments for %d", len(st.dead), len(segs))
	}
	for i, blob := range blobs[blobSegments:] {
		err := blob.Access(func(b []byte) error {
			s, err := decodeSegment(b, uint32(len(st.convs)), st.nextID)
			if err == nil {
				err = s.SetDeadBits(st.dead[i])
			}
			segs[i] = s
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("segment %d: %w", i, err)
		}
		refs[segs[i]] = blob.Ref()
	}
	files, err := st.fileStates(segs, dict.Len())
	if err != nil {
		return nil, err
	}

	w.ix.mu.Lock()
	defer w.ix.mu.Unlock()
	w.ix.seed = st.seed
	w.ix.dict, w.ix.stats, w.ix.nextID = dict, *stats, st.nextID
	w.ix.agents = st.agents
	w.ix.agentIDs = make(map[string]uint32, len(st.agents))
	for i, a := range st.agents {
		w.ix.agentIDs[a] = uint32(i)
	}
	if len(st.agents) > 0 {
		w.ix.stats.Grow(uint32(len(st.agents) - 1))
	}
	w.ix.episodes = make(map[string]bool, len(st.episodes))
	for _, ep := range st.episodes {
		w.ix.episodes[ep] = true
	}
	w.ix.setSegments(segs)
	w.ix.byID = make([]*fileState, st.nextID)
	for _, fs := range files {
		// Checked when read: a time within the racy window of the read is
		// checked again at the first update, as following does.
		fs.checkedAt = fs.readAt
		w.ix.files[fs.rel] = fs
		w.ix.byID[fs.id] = fs
	}
	w.ix.convs.Restore(st.convs)
	return refs, nil
}

// A mapped blob's file cut by someone else (the store never writes into a
// blob) makes a read of a page past its new end raise SIGBUS. Most cuts are
// found before anything reads the mapping: each update and each search
// first compares the restored blobs' sizes (an fstat each on a descriptor
// kept open, some microseconds in all) with those they were mapped at, and
// a cut one drops the entry (dropMapping, fault.go) before the request
// reads it. A cut between that check and a read is caught as the fault it
// raises (fault.go); both go the same way, said once.
type mappingGuard struct {
	mu     sync.Mutex
	files  []*os.File
	sizes  []int64
	mapped []faultOwner // whose mappings the index reads: a fault on one is corruption
	cut    bool         // found once: the index no longer reads the mapping

	dropMu  sync.Mutex // one drop; others wait for it
	dropped bool

	afterCheck func(point string) // fault injection (fault.go)
}

// watch opens the files of snap's blobs in dir, and takes a fault on its
// mappings for corruption.
func (g *mappingGuard) watch(dir string, snap *store.Snapshot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mapped = append(g.mapped, snap)
	for _, b := range snap.Blobs() {
		f, err := os.Open(filepath.Join(dir, b.Ref().Name))
		if err != nil {
			continue // removed since (a commit of another writer): the mapping holds its pages
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			continue
		}
		g.files, g.sizes = append(g.files, f), append(g.sizes, info.Size())
	}
	if injectFaults != nil && g.afterCheck == nil {
		injectFaults(g)
	}
}

// check reports a blob's file shorter than when it was mapped, once.
func (g *mappingGuard) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cut || len(g.files) == 0 {
		return nil
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
	g.files, g.sizes, g.mapped = nil, nil, nil
}

// checkMapping drops the restored state when a blob it maps was cut; point
// names the caller for fault injection. The caller must not hold refreshMu.
// Flushed segments' blobs are watched too (flush.go), so it runs without a
// restored commit as well.
func (w *cacheWriter) checkMapping(point string) {
	if w == nil {
		return
	}
	if err := w.guard.check(); err != nil {
		w.dropMapping(err)
		return
	}
	w.guard.inject(point)
}

// forget drops every file and segment, as a new index: the next update
// reads the run afresh. The caller holds refreshMu.
func (ix *Index) forget() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.commits.Add(1)
	ix.files, ix.byID, ix.nextID = map[string]*fileState{}, nil, 0
	ix.setSegments(nil)
	ix.stats = bm25.Stats{}
	ix.stats.Grow(uint32(max(len(ix.agents), 1) - 1))
	ix.dict = bm25.NewDict()
	ix.episodes = map[string]bool{}
	ix.fw.markAllDirty() // every folder walked, with or without events
}
