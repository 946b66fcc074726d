package retriever

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"runls/masking"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
	"runls/retriever/internal/runfs"
)

// Index follows and indexes one run folder. It is safe for concurrent use:
// searches read a committed state under a read lock, and an update builds
// outside the lock and commits each file whole under the write lock, so a
// search never sees half of a file's update.
type Index struct {
	root        string // real path
	fsys        *os.Root
	interpreter *Interpreter
	masker      masking.Masker
	log         *zap.Logger
	maxDiags    int
	workers     int
	searcher    bm25.Searcher // the scoring paths' tuning and buffers
	batchDocs   int           // tests: the most pieces of a batch (0: the engine's limit)
	batchInput  int64         // tests: the bytes a worker reads into one batch (0: batchBytesFor)
	planPart    int           // tests: the fewest files a goroutine of planFound plans (0: planPartFiles)

	refreshMu sync.Mutex // one update at a time
	// mergeMu is held by the merge goroutine (merge.go) while it runs.
	// life ends at Close: it stops the merge under way (bm25.Merge asks
	// closing) and the goroutine, and the goroutine's update after a fault
	// runs under it.
	mergeMu   sync.Mutex
	life      context.Context
	endLife   context.CancelFunc
	mergeHeld func()      // tests: called in each merge before its swap
	mergeDone func()      // tests: called in each merge after its swap, before the next commit
	mergesOff atomic.Bool // tests: no merge after an update
	mergeDue  atomic.Bool // an update added segments or killed pieces: a merge is due

	mu    sync.RWMutex // over state
	state corpus.State

	indexed atomic.Bool // a first full update has finished
	// restored: the index began from its cache entry's states (a reopen),
	// which its first update confirms file by file (partial.go, confirm.go).
	restored      atomic.Bool
	restoredFiles int        // the files the entry held, set at Open
	first         firstIndex // how far the first update is, for partial answers (partial.go)

	once onceLog // links, folders and files warned about

	handles    runfs.Handles   // files kept open to read results
	rb         readBack        // the one reader (and masker) of indexed text
	failAnswer failuresAnswer  // the last run/failures answer (failures.go)
	cache      *persist.Writer // the run's cache entry (cache.go, internal/persist); nil: none

	boundMemory bool // Options.BoundMemory (internal/persist/memory.go)
	oneShot     bool // Options.OneShot
	// opened is the walk Open began beside the restore (Options.OneShot),
	// taken by the first update; its goroutine holds refreshMu until done.
	opened *openedScan
	// collectBack turns the collector back on (collectNone): set at a
	// command's Open, called by its first update (collectOn).
	collectBack func()

	subs subscribers

	fw followState // discovery's state and the watcher's view (runfs.Discovery; watch.go)

	bytesRead  atomic.Int64 // content bytes read through the engine's reader
	checkBytes atomic.Int64 // bytes read to tell a rewrite
}

// Open resolves the run folder's real path and checks that it is a folder.
// It reads no file: the first Refresh or Search indexes.
func Open(ctx context.Context, opts Options) (*Index, error) {
	if opts.Root == "" {
		return nil, errors.New("open run folder: no path given")
	}
	real, err := filepath.EvalSymlinks(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("open run folder: %w", err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, fmt.Errorf("open run folder: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("open run folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open run folder %s: not a folder", opts.Root)
	}
	fsys, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open run folder: %w", err)
	}
	ix := &Index{
		root:        real,
		fsys:        fsys,
		interpreter: opts.Interpreter,
		masker:      opts.Masker,
		log:         opts.Logger,
		maxDiags:    opts.MaxDiagnosticsPerFile,
		boundMemory: opts.BoundMemory,
		oneShot:     opts.OneShot,
		workers:     min(runtime.GOMAXPROCS(0), 8),
		state: corpus.State{Files: map[string]*corpus.File{}, AgentIDs: map[string]uint32{}, Episodes: map[string]bool{}, Dict: bm25.NewDict(),
			Seed: rand.Uint64() | 1},
		handles: runfs.NewHandles(runfs.MaxOpenHandles),
	}
	ix.life, ix.endLife = context.WithCancel(context.Background())
	ix.searcher.Tuning = bm25.DefaultTuning()
	if ix.log == nil {
		ix.log = zap.NewNop()
	}
	ix.once.log = ix.log
	if ix.maxDiags <= 0 {
		ix.maxDiags = DefaultMaxDiagnostics
	}
	if ix.masker == masking.NoOp() {
		ix.masker = nil
	}
	ix.rb = readBack{root: ix.root, fsys: ix.fsys, handles: &ix.handles, masker: ix.masker, convs: &ix.state.Convs}
	ix.state.Convs.ID("-")
	ix.fw.Listed = opts.listed
	oneShot := opts.OneShot && opts.Cache.Root != nil
	if oneShot {
		ix.scanAtOpen()
	}
	if oneShot && opts.BoundMemory {
		ix.collectBack = collectNone()
	}
	ix.cache = ix.openCache(opts)
	ix.restoredFiles = len(ix.state.Files)
	ix.restored.Store(ix.restoredFiles > 0)
	if !ix.restored.Load() {
		ix.collectOn(true) // a first indexing collects as ever
	}
	if holdInject != nil {
		holdInject(ix)
	}
	return ix, nil
}

// Root is the real path of the run folder.
func (ix *Index) Root() string { return ix.root }

// Close writes the cache entry if the index changed since its last write,
// and releases the entry and the index's open folder.
func (ix *Index) Close() error {
	// The merges stop, the one under way at its next check; the walk
	// begun at Open (never taken when no update ran) is done before the
	// folder it reads is closed.
	ix.endLife()
	ix.awaitMerges()
	ix.refreshMu.Lock()
	ix.opened = nil
	ix.refreshMu.Unlock()
	cerr := ix.cache.Close()
	ix.handles.CloseAll()
	return errors.Join(cerr, ix.fsys.Close())
}

// IsRunFolder reports whether the root holds at least one episode-N folder.
// It lists the folder the index opened, as every read does: the path may
// name another folder since (spec §1: nothing outside is read).
func (ix *Index) IsRunFolder() bool {
	f, err := ix.fsys.Open(".")
	if err != nil {
		return false
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, ok := EpisodeNumber(e.Name()); ok && e.IsDir() {
			return true
		}
	}
	return false
}

// BytesRead reports the content bytes the index has read from files, and the
// bytes it read only to tell whether a file was rewritten.
func (ix *Index) BytesRead() (content, checks int64) {
	return ix.bytesRead.Load(), ix.checkBytes.Load()
}

// Refresh brings the index up to date with every change made to the files
// before the call, reporting progress. With a healthy watcher (see Watch) it
// looks only at what the watcher's events named; without one it walks the
// run folder. Subscribers (see Watch) are told which record files changed
// once the update is committed, outside the update's lock: a subscriber may
// call the index, and the calls of two updates may run at the same time, so
// a subscriber reads the state it publishes when it publishes it.
func (ix *Index) Refresh(ctx context.Context, progress func(Progress)) (Changes, error) {
	if err := ix.fw.awaitEvents(ctx, ix.log); err != nil {
		return Changes{}, err
	}
	return ix.update(ctx, progress)
}

// update is Refresh without the wait for events: the watcher's own updates,
// made on its events, need none.
//
// A fault on a mapping of the cache entry (internal/persist/fault.go) drops the entry, and
// the update is made again, reading the run afresh.
func (ix *Index) update(ctx context.Context, progress func(Progress)) (Changes, error) {
	ix.cache.CheckMapping("")
	return ix.updateChecked(ctx, progress)
}

// updateChecked is update for a caller that has just checked the mappings
// (freshOnce): the check stats every blob of the entry, and a search made
// it twice. A cut since is the fault path's (internal/persist/fault.go), as in any read.
func (ix *Index) updateChecked(ctx context.Context, progress func(Progress)) (Changes, error) {
	c, err := persist.Guarded(ix.cache.Guard(), "updating the index", func() (Changes, error) { return ix.refresh(ctx, progress) })
	ix.subs.notify(c) // a cancelled update tells what it committed
	ix.cache.Changed()
	if err == nil && ix.mergeDue.Load() {
		ix.mergeLater()
	}
	return c, err
}

func (ix *Index) refresh(ctx context.Context, progress func(Progress)) (Changes, error) {
	ix.refreshMu.Lock()
	defer ix.refreshMu.Unlock()
	defer ix.fw.Settle() // what it left polled or undone, for a search's quiet check (runfs.Probe)
	sc, err := ix.scan()
	if err != nil {
		return Changes{}, err
	}
	ix.mu.RLock()
	known := ix.state.Files
	ix.mu.RUnlock()

	fw := &ix.fw
	tasks, total, runBytes, knownFound := ix.planFound(sc, known)
	var changed []string
	first := !ix.indexed.Load()
	if first {
		ix.first.planned(runBytes)
	}
	batchBytes := corpus.BatchBytesFor(total, ix.batchInput)
	if first && ix.boundMemory {
		// The whole run, not what this update reads: a reopen's first update
		// reads little, but the states it restored are on the heap.
		persist.BoundMemory(persist.MemoryUse{RunBytes: runBytes, Files: int64(sc.Len()), Flushed: ix.cache.Flushes(),
			Batches: int64(ix.workers) * batchBytes, SortExtra: persist.SortExtra(ix.workers, batchBytes)})
	}
	removed := goneFiles(&fw.Discovery, sc, known, knownFound)
	sc.Release() // planned
	ix.collectOn(len(tasks) > 0 || len(removed) > 0)
	episodes := sc.ChangedEpisodes(func(eps map[string]bool) bool {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		return maps.Equal(eps, ix.state.Episodes)
	})
	if len(tasks) == 0 && len(removed) == 0 {
		if episodes != nil {
			ix.commit(nil, nil, nil, episodes)
		}
		ix.indexedAll(first)
		return Changes{}, nil
	}
	if len(tasks) > 0 {
		ix.cache.Inject("update")
	}
	jobs, nTasks := readJobs(tasks, first), len(tasks)
	tasks = nil // the jobs hold them, each until it is handed to a worker

	r := &refreshRun{ix: ix, ctx: ctx, ch: make(chan readJob), episodes: episodes, batchBytes: batchBytes, first: first, total: total,
		nTasks: nTasks, progress: progress, changed: changed, removed: removed}
	r.report()

	var wg sync.WaitGroup
	for w := 0; w < ix.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work()
		}()
	}
	for i := range jobs {
		r.ch <- jobs[i]
		jobs[i] = readJob{}
	}
	close(r.ch)
	wg.Wait()
	changed, removed = r.changed, r.removed
	if len(r.faults) > 0 {
		return Changes{}, r.faults[0] // thrown away whole by update
	}
	for _, rel := range r.failed {
		fw.PollFiles[rel] = true
	}
	if err := ctx.Err(); err != nil {
		// Cancelled: what the scan found and was not done is left to the
		// next update (the scan's change set is spent).
		gone := make([]string, len(removed))
		for i, f := range removed {
			gone[i] = f.Rel
		}
		fw.Leave(r.skipped, gone, sc.Episodes)
		slices.Sort(changed)
		return Changes{Files: slices.Compact(changed)}, err
	}
	// The workers are done. An update that read nothing new (its files
	// checked the same) commits nothing, so that the cache entry is not
	// written again; but a file confirmed out of the racy window is
	// committed so (State.Confirm): its entry's record kept racy, every
	// reopen checked it again and wrote the entry whole (some 117 MB at
	// 1 GB), and found it racy again.
	if len(removed) > 0 || episodes != nil || len(r.confirmed) > 0 {
		ix.commit(nil, nil, removed, episodes, r.confirmed...)
	}
	if nTasks > 0 || len(removed) > 0 {
		// Segments were added or pieces died: a command merges here, a
		// server after the update (merge.go). An update that read nothing
		// (a reopen that found the run as its entry left it) merges
		// nothing: a reopen stays as cheap as its entry makes it.
		if !ix.oneShot {
			ix.mergeDue.Store(true)
		} else if _, err := ix.mergeAll(func() {}, func() {}); err != nil {
			return Changes{}, err
		}
	}
	for _, r := range removed {
		if r.Form.IsRecord() {
			changed = append(changed, runfs.Abs(ix.root, r.Rel))
		}
	}
	ix.indexedAll(first)
	slices.Sort(changed)
	changed = slices.Compact(changed)
	return Changes{Files: changed}, nil
}

// indexedAll marks the run indexed after an update; after the first (a
// first indexing, or a reopen's first update, which restored every file's
// state from the cache entry and read the entry's state blob whole) the
// heap's free pages go back to the kernel: a reopen of 100,000 files that
// found nothing changed kept some 150 MB it no longer used. Not in a
// command (OneShot), which exits: there the release's collection ran
// beside the answer and held the exit up.
func (ix *Index) indexedAll(first bool) {
	ix.indexed.Store(true)
	if first && ix.boundMemory && !ix.oneShot {
		go persist.ReleaseMemory() // off the first answer's path
	}
}

// commit makes a batch visible under the write lock (corpus.State.Commit),
// with the files checked the same out of their racy window committed as
// confirmed (corpus.State.Confirm) under the same lock.
func (ix *Index) commit(l *corpus.LaidOut, updates []*corpus.Update, removed []*corpus.File, episodes map[string]bool, confirmed ...*corpus.File) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, fs := range confirmed {
		ix.state.Confirm(fs, fs.CheckedAt)
	}
	ix.state.Commit(l, updates, removed, episodes)
}

// newBuilder returns the builder of a worker's batches: a test may lower
// the batch's document limit (Index.batchDocs).
func (r *refreshRun) newBuilder() *corpus.Builder {
	ix := r.ix
	b := corpus.NewBuilder(ix.searcher.Tuning.LayerMin)
	if ix.batchDocs > 0 {
		b.SetMaxDocs(ix.batchDocs)
	}
	return b
}

// firstBatchBytes is a worker's first batch in the first update; each next
// batch is twice the last, up to the update's batch size. Answers made
// while the first index is built (partial.go) see a batch once it is
// committed: with 16-32 MB batches the first came after some 1 s of
// reading at a load of 5 (a 200 MB run's partial answer at 0.5 s covered
// 0%). The cost: some four more small segments a worker, merged at the end.
const firstBatchBytes = 1 << 20

// readJob is files of one folder that a worker reads in turn.
type readJob struct {
	dir   string
	epNum string // the episode's number (a folder is in one episode)
	tasks []*task
	size  int64
}

// jobBytes is about how much a job reads: a folder's small files go
// together (the folder is opened once for them), and its large files one a
// job, so that the workers share them.
const jobBytes = 1 << 20

// readJobs groups the tasks by folder into jobs, larger jobs first, so that
// the workers finish together. A first indexing (newestFirst) takes the
// episodes highest-numbered first, the larger jobs first within each: the
// episode being written is the one asked about, and answers made while
// the first index is built (partial.go) cover it first. The workers may
// then finish a little apart (the oldest episode's largest file last).
func readJobs(tasks []*task, newestFirst bool) []readJob {
	open := map[string]int{} // a folder's job that still takes files
	var jobs []readJob
	for _, t := range tasks {
		dir, n := runfs.Parent(t.c.Rel), t.size-t.from
		if n >= jobBytes {
			jobs = append(jobs, readJob{dir: dir, epNum: t.c.EpNum, tasks: []*task{t}, size: n})
			continue
		}
		k, ok := open[dir]
		if !ok || jobs[k].size+n > jobBytes {
			k = len(jobs)
			open[dir] = k
			jobs = append(jobs, readJob{dir: dir, epNum: t.c.EpNum})
		}
		jobs[k].tasks = append(jobs[k].tasks, t)
		jobs[k].size += n
	}
	slices.SortStableFunc(jobs, func(a, b readJob) int {
		if newestFirst {
			if c := corpus.CompareEpisodeNumbers(b.epNum, a.epNum); c != 0 {
				return c
			}
		}
		return cmp.Compare(b.size, a.size)
	})
	return jobs
}

// refreshRun is what the workers of one update share: the jobs, the batch
// size, the progress, and what they found, under mu.
type refreshRun struct {
	ix         *Index
	ctx        context.Context
	ch         chan readJob
	episodes   map[string]bool
	batchBytes int64
	first      bool // the first update: its batches start small (firstBatchBytes)
	total      int64
	nTasks     int
	progress   func(Progress)
	done       atomic.Int64 // bytes read
	filesDone  atomic.Int64
	commitMu   sync.Mutex // serializes commits of workers

	mu      sync.Mutex
	changed []string // record files changed (absolute paths)
	failed  []string // files that could not be read
	skipped []string // files not read: the update was cancelled
	faults  []error  // the workers' faults on a mapping
	removed []*corpus.File
	// confirmed are committed files checked the same out of their racy
	// window (task.confirmed).
	confirmed []*corpus.File
}

// report tells the progress, when asked for.
func (r *refreshRun) report() {
	if r.progress != nil {
		r.progress(Progress{FilesDone: int(r.filesDone.Load()), FilesTotal: r.nTasks, BytesDone: r.done.Load(), BytesTotal: r.total})
	}
}

// work is one worker of an update: it reads the jobs it takes into batches
// and commits each batch. A worker reads the mapped dictionary and
// statistics as it lays out and commits its batches (and, with segments
// flushed as they are built, mapped segments): it runs guarded from its
// top, and one that faults commits nothing more and drains its jobs, so
// that the others finish; the update then fails with the fault, and update
// drops all it committed.
func (r *refreshRun) work() {
	ix := r.ix
	defer ix.cache.Guard().Rest("reading files", func(err error) {
		r.mu.Lock()
		r.faults = append(r.faults, err)
		r.mu.Unlock()
		for range r.ch {
		}
	})()
	b := r.newBuilder()
	b.SetOnePass(corpus.OnePass(r.batchBytes))
	limit := r.batchBytes
	if r.first {
		limit = min(firstBatchBytes, limit)
	}
	// Room for the worker's share of what is left, up to its batch: the
	// batch's columns and postings log are made once, not grown file
	// after file; a first update's small first batches do not make the
	// room of the largest (touched when made, and kept by the next batches).
	reserve := func() {
		b.ReserveInput(min(max(r.total/int64(ix.workers)-r.done.Load()/int64(ix.workers), 0)+1, limit))
	}
	reserve()
	var pend []*corpus.Update
	flush := func() {
		if len(pend) == 0 {
			return
		}
		l := ix.state.LayOut(b)
		// Flushed to the cache entry between its layout and its
		// commit: the committed pieces never call the cache.
		l.Seg, _ = ix.cache.FlushBuilt(l.Seg)
		if ix.first.hold != nil {
			ix.first.hold(r.ctx)
		}
		func() {
			r.commitMu.Lock()
			defer r.commitMu.Unlock() // a fault in commit must not leave it held
			ix.commit(l, pend, nil, r.episodes)
		}()
		r.mu.Lock()
		for _, u := range pend {
			if u.Next != nil && u.Next.Form.IsRecord() {
				r.changed = append(r.changed, runfs.Abs(ix.root, u.Next.Rel))
			}
		}
		r.mu.Unlock()
		b = b.NextBatch()
		pend = nil
	}
	var buf readBuffer
	for j := range r.ch {
		if r.ctx.Err() != nil {
			r.mu.Lock()
			for _, t := range j.tasks {
				r.skipped = append(r.skipped, t.c.Rel)
			}
			r.mu.Unlock()
			continue
		}
		// The folder is opened once for its files (else each open
		// walks the path from the run folder again).
		dir := runfs.OpenFolder(ix.root, ix.fsys, j.dir)
		first := len(pend)
		var confirmed []*corpus.File
		for _, t := range j.tasks {
			u, drop := ix.read(t, b, dir, &buf)
			r.done.Add(t.size - t.from)
			r.filesDone.Add(1)
			if u != nil {
				pend = append(pend, u)
			}
			if t.confirmed {
				confirmed = append(confirmed, t.old)
			}
			if drop {
				// Gone or unreadable since it was found: left out until
				// it can be read again, and given a stat at each update.
				r.mu.Lock()
				if t.old != nil {
					r.removed = append(r.removed, t.old)
				}
				r.failed = append(r.failed, t.c.Rel)
				r.mu.Unlock()
			}
		}
		if !dir.StillAt() {
			// Moved (perhaps out of the run) while its files were
			// read: what was read is not used, and read again.
			ix.once.note("moved:"+j.dir, "a folder moved while its files were read; they are read again", zap.String("folder", j.dir))
			r.mu.Lock()
			for _, u := range pend[first:] {
				u.Discard = true
				r.failed = append(r.failed, u.Next.Rel)
			}
			r.mu.Unlock()
			confirmed = nil // its checks read the folder that moved
		}
		if len(confirmed) > 0 {
			r.mu.Lock()
			r.confirmed = append(r.confirmed, confirmed...)
			r.mu.Unlock()
		}
		dir.Close()
		// Between jobs only: a job's updates are committed together.
		// A full batch (a file in it was refused) is finished too, so
		// that the next job's files start a new one.
		if b.InputBytes > limit || b.Docs() > 1<<20 || b.Full() {
			flush()
			limit = min(2*limit, r.batchBytes)
			reserve()
		}
		r.report()
	}
	flush()
}

// planFound plans the reads of the files the scan found against known,
// the committed files: the tasks, the bytes they read, the run's bytes, and
// how many of known it found. A file with several links is polled (its
// writes' events go to other folders, or none). The folders are planned
// side by side by the update's workers: a reopen of 100,000 files looks
// each up in known, a cache miss or three a file (some 50 ms on one core).
func (ix *Index) planFound(sc *runfs.Scan, known map[string]*corpus.File) (tasks []*task, total, runBytes int64, knownFound int) {
	fw := &ix.fw
	if fw.PollFiles == nil {
		fw.PollFiles = map[string]bool{}
	}
	folders := sc.Folders()
	parts := splitFolders(folders, ix.workers, cmp.Or(ix.planPart, planPartFiles))
	type share struct {
		tasks           []*task
		total, runBytes int64
		knownFound      int
		linked          []string
	}
	shares := make([]share, len(parts))
	planPart := func(part [][]runfs.Candidate, sh *share) {
		for _, cands := range part {
			for _, c := range cands {
				sh.runBytes += c.Info.Size
				// A hard link is written through paths whose events go to
				// other folders (or none, outside the run): it is polled.
				if c.Info.Nlink > 1 {
					sh.linked = append(sh.linked, c.Rel)
				}
				old := known[c.Rel]
				if old != nil {
					sh.knownFound++
				}
				if t := ix.plan(old, c); t != nil {
					sh.tasks = append(sh.tasks, t)
					sh.total += t.size - t.from
				}
			}
		}
	}
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() { planPart(parts[i], &shares[i]) })
	}
	wg.Wait()
	// A file polled for its links, or for its failed read, is planned now:
	// it stays polled only if it still has several links (a read that fails
	// again polls it again). A full scan found every file there is, so one
	// polled and not found is gone too (goneFiles need not look it up: its
	// first lookup would build the scan's map of every path).
	switch {
	case sc.Full:
		clear(fw.PollFiles)
	case len(fw.PollFiles) > 0:
		for _, cands := range folders {
			for _, c := range cands {
				delete(fw.PollFiles, c.Rel)
			}
		}
	}
	for _, sh := range shares {
		tasks = append(tasks, sh.tasks...)
		total += sh.total
		runBytes += sh.runBytes
		knownFound += sh.knownFound
		for _, rel := range sh.linked {
			fw.PollFiles[rel] = true
		}
	}
	return tasks, total, runBytes, knownFound
}

// planPartFiles is the fewest files a goroutine of planFound plans: fewer
// are planned on the caller's goroutine alone.
const planPartFiles = 4096

// splitFolders splits folders into at most n runs of about equal numbers
// of files, none empty, and no more runs than there are least files.
func splitFolders(folders [][]runfs.Candidate, n, least int) [][][]runfs.Candidate {
	files := 0
	for _, cands := range folders {
		files += len(cands)
	}
	n = max(1, min(n, files/least))
	parts := make([][][]runfs.Candidate, 0, n)
	start, done := 0, 0
	for i, cands := range folders {
		done += len(cands)
		if len(parts) < n-1 && done < files && done*n >= (len(parts)+1)*files {
			parts = append(parts, folders[start:i+1])
			start = i + 1
		}
	}
	return append(parts, folders[start:])
}

// gone returns the known files the scan no longer found (of the folders it
// listed, when it was not a full walk), and stops polling them (a full
// scan's were stopped by planFound). knownFound
// is how many of known the scan found: a full scan that found them all
// (a reopen of a run whose files are all there) looks none up again, which
// was a twentieth of a reopen's CPU at 100,000 files.
func goneFiles(fw *runfs.Discovery, sc *runfs.Scan, known map[string]*corpus.File, knownFound int) []*corpus.File {
	var removed []*corpus.File
	if sc.Full {
		if knownFound < len(known) { // else every known file was found: none is gone
			for rel, old := range known {
				if _, ok := sc.Lookup(rel); !ok {
					removed = append(removed, old)
				}
			}
		}
		return removed // planFound left polled only the linked files it found
	}
	for rel := range sc.Removed {
		if _, ok := sc.Lookup(rel); ok {
			continue // found again: another file, or the same
		}
		delete(fw.PollFiles, rel)
		if old := known[rel]; old != nil {
			removed = append(removed, old)
		}
	}
	return removed
}
