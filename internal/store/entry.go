// This file holds an Entry: one run and configuration's folder, opened as its
// one writer (an exclusive lock) or, when another process writes it, as a
// reader; opening checks the last commit and, for the writer, removes what
// it does not name; Commit writes a new commit point.

package store

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options say how an entry is opened.
type Options struct {
	// Verify is how much of each blob opening checks.
	Verify VerifyMode
	// Read is how blobs are read: mapped (the default) or onto the heap.
	Read ReadMode
	// MaxBytes bounds the whole cache (--cache-max): when this process
	// writes the entry, entries used longest ago are dropped at open and
	// after each commit until the cache fits (never this entry, nor one
	// another live writer holds). 0 leaves the cache unbounded.
	MaxBytes int64
	// CallerOnDisk keeps each commit's caller section on disk only: the
	// open entry's manifest is held without it, and Snapshot.Caller reads it
	// from the manifest file. A server's is the retriever's file table, 80
	// bytes a file (8 MB of the heap at 100,000 files, issue 33), which only
	// `runls cache` reads (List, from the file).
	CallerOnDisk bool
}

// VerifyMode is how much of a blob is checked when it is opened.
type VerifyMode int

const (
	// VerifyFull checks every blob's frame and its content's CRC-32C:
	// reads every byte once, at memory speed (BenchmarkOpen).
	VerifyFull VerifyMode = iota
	// VerifyFrame checks lengths, headers, footers and that the footer's
	// checksum is the manifest's: O(1) a blob (the manifest, with every
	// blob's chunk sums, is checked whole). A byte flipped inside the
	// content is then not seen at open: the caller checks each blob with
	// Blob.Check, or each part of one with Blob.CheckRange, before its first
	// use (and Snapshot.CheckAll the rest, in the background).
	VerifyFrame
)

// ReadMode is how blob content is read.
type ReadMode int

const (
	ReadMap  ReadMode = iota // memory-mapped read-only (heap only where there is no mmap), one page off the 2 MB folios (mapping_unix.go)
	ReadHeap                 // read whole onto the heap
	// ReadMapAligned is ReadMap at 2 MB boundaries, so that the page
	// cache's 2 MB folios are mapped whole: for a process that answers
	// for long (a server), whose random reads across the entry then miss
	// the TLB less, at the cost of resident page cache around what it read.
	ReadMapAligned
)

// Entry is an open cache entry.
type Entry struct {
	root   *Root
	key    string
	dir    string
	run    string // real path
	config []byte
	opts   Options

	mu       sync.Mutex
	lock     *os.File // held while this process writes the entry
	m        *Manifest
	cached   *Snapshot          // m opened by its load, for the next Snapshot call
	mStat    os.FileInfo        // the manifest file m was read from (readers: to see a new commit)
	pending  map[string]BlobRef // blobs written, not yet named by a commit
	unsynced map[string]bool    // pending blobs not yet fsynced (BlobWriter.CommitUnsynced)
	verified map[string]bool    // blobs whose content was checked in this process
	report   *Report
	closed   bool
}

// Open opens the entry of run (resolved to its real path) and config,
// creating it if missing. It never fails on a bad entry: what it dropped
// is in Report, and Snapshot then has no commit. It fails only when the
// cache cannot be used at all (a folder another user owns, no space for
// a folder, no locks on this system): the caller then keeps no cache.
func (r *Root) Open(run string, config []byte, opts Options) (*Entry, error) {
	real, err := RealPath(run)
	if err != nil {
		return nil, fmt.Errorf("store: run folder: %w", err)
	}
	key := Key(real, config)
	e := &Entry{
		root: r, key: key, dir: filepath.Join(r.dir, key), run: real, config: slices.Clone(config), opts: opts,
		pending: map[string]BlobRef{}, unsynced: map[string]bool{}, verified: map[string]bool{},
		report: &Report{Entry: filepath.Join(r.dir, key)},
	}
	for _, it := range r.fixed {
		e.report.Items = append(e.report.Items, it)
	}
	r.fixed = nil
	if err := e.takeLock(); err != nil {
		return nil, err
	}
	e.touch()
	e.mu.Lock()
	e.loadLocked(e.report)
	if e.lock != nil {
		e.collectLocked()
	}
	e.mu.Unlock()
	if e.lock != nil {
		e.trim()
	}
	return e, nil
}

// Writable reports whether this process writes the entry; false when
// another process held the lock at open (then the entry is read-only: its
// commits are read, nothing is written, and Upgrade may take over later).
func (e *Entry) Writable() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lock != nil
}

// Key is the entry's folder name; Dir its path.
func (e *Entry) Key() string { return e.key }
func (e *Entry) Dir() string { return e.dir }

// Report is what Open dropped, removed or tightened, or nil: one value for
// one WARN (or an INFO when Report.Dropped is false).
func (e *Entry) Report() *Report { return e.report.orNil() }

// Snapshot opens the entry's latest commit for reading, or gives nil when
// there is none. A reader re-reads the manifest when another process has
// committed since; a commit found bad then is dropped (not used) and said
// in the error, a *Report. The caller closes the snapshot.
func (e *Entry) Snapshot() (*Snapshot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("store: entry closed")
	}
	rep := &Report{Entry: e.dir}
	if e.lock == nil && e.manifestChanged() {
		e.loadLocked(rep)
	}
	for attempt := 0; ; attempt++ {
		if s := e.cached; s != nil {
			e.cached = nil
			return s, rep.asError()
		}
		if e.m == nil {
			return nil, rep.asError()
		}
		s, err := e.openSnapshot(e.m)
		if err == nil {
			return s, rep.asError()
		}
		// A reader's commit may have been replaced (and its blobs
		// removed) since it was read.
		if e.lock == nil && attempt < maxReloads && e.manifestChanged() {
			e.loadLocked(rep)
			continue
		}
		e.dropLocked(rep, err)
		return nil, rep
	}
}

// maxReloads bounds a reader's retries when commits keep replacing the one
// it read: past it, the reader takes the entry as unusable for this call.
const maxReloads = 8

// CreateBlob starts a new blob (writer only).
func (e *Entry) CreateBlob() (*BlobWriter, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lock == nil {
		return nil, ErrReadOnly
	}
	tmp := filepath.Join(e.dir, tmpPrefix+strings.TrimPrefix(newBlobName(), blobPrefix))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return nil, fmt.Errorf("store: create blob: %w", err)
	}
	if err := f.Chmod(fileMode); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("store: create blob: %w", err)
	}
	var head [blobHeaderSize]byte // rewritten with the length at Commit
	if _, err := f.Write(head[:]); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("store: create blob: %w", err)
	}
	return &BlobWriter{e: e, f: f, tmp: tmp, buf: bufio.NewWriterSize(f, blobWriteBuffer), crc: crc32.New(castagnoli)}, nil
}

// Commit makes a new commit naming blobs (each written by CreateBlob in
// this process or named by the current commit) and caller, the caller's
// section. It is the commit point: the blobs' names are made durable, then
// the manifest is written to a temporary name, fsynced, renamed over the
// old one and the folder fsynced. Blobs the old commit named and this one
// does not are removed. The new commit is given back open for reading.
func (e *Entry) Commit(blobs []BlobRef, caller []byte) (*Snapshot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lock == nil {
		return nil, ErrReadOnly
	}
	old := map[string]BlobRef{}
	var gen uint64
	if e.m != nil {
		gen = e.m.Generation
		for _, b := range e.m.Blobs {
			old[b.Name] = b
		}
	}
	named := map[string]bool{}
	for _, b := range blobs {
		known, ok := e.pending[b.Name]
		if !ok {
			known, ok = old[b.Name]
		}
		if !ok || known != b || named[b.Name] {
			return nil, fmt.Errorf("store: commit names blob %q that this entry does not hold, or twice", b.Name)
		}
		named[b.Name] = true
	}
	m := &Manifest{
		Generation: gen + 1, ConfigHash: ConfigHash(e.config), Config: e.config,
		RunPath: e.run, Blobs: slices.Clone(blobs), Caller: caller,
	}
	if err := e.syncBlobsLocked(blobs); err != nil {
		return nil, err
	}
	if err := e.writeManifest(m); err != nil {
		return nil, err
	}
	if e.opts.CallerOnDisk {
		m.Caller = nil
	} else {
		m.Caller = slices.Clone(caller)
	}
	e.m = m
	for _, b := range blobs {
		delete(e.pending, b.Name)
		e.verified[b.Name] = true // written by this process, checksummed as it was written
	}
	for name := range old {
		if !named[name] {
			os.Remove(filepath.Join(e.dir, name))
		}
	}
	e.touch()
	s, err := e.openSnapshot(m)
	if err != nil {
		return nil, err
	}
	e.trim()
	return s, nil
}

// Upgrade tries again to become the entry's writer (after the process
// that wrote it ended); true when this process now writes it.
func (e *Entry) Upgrade() (bool, error) {
	e.mu.Lock()
	if e.lock != nil {
		e.mu.Unlock()
		return true, nil
	}
	e.mu.Unlock()
	if err := e.takeLock(); err != nil {
		return false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lock == nil {
		return false, nil
	}
	e.loadLocked(e.report)
	e.collectLocked()
	return true, nil
}

// Close releases the writer's lock. Snapshots stay readable until closed.
func (e *Entry) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.cached != nil {
		e.cached.Close()
		e.cached = nil
	}
	if e.lock != nil {
		err := e.lock.Close()
		e.lock = nil
		return err
	}
	return nil
}

// lockName is the lock file; its mtime is the entry's last use.
const lockName = "lock"

// takeLock creates the entry's folder and tries the writer's lock. A lock
// taken on a lock file that its path no longer names (the entry was
// cleared between the open and the lock) is retried on the new folder.
func (e *Entry) takeLock() error {
	path := filepath.Join(e.dir, lockName)
	for attempt := 0; attempt < 8; attempt++ {
		item, err := ensureDir(e.dir, false)
		if err != nil {
			return err
		}
		if item != nil {
			e.report.Items = append(e.report.Items, *item)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return err
		}
		if !ok {
			moved := !sameFile(f, path)
			f.Close()
			if moved {
				continue // busy on a folder being removed: try the new one
			}
			return nil // another process writes the entry: read-only
		}
		if !sameFile(f, path) {
			f.Close()
			continue
		}
		e.mu.Lock()
		e.lock = f
		e.mu.Unlock()
		return nil
	}
	return fmt.Errorf("store: %s: the entry keeps being removed under the lock", e.dir)
}

// touch records a use of the entry: the lock file's mtime, which every open
// and commit sets and eviction reads (no write of the manifest for a read).
func (e *Entry) touch() {
	now := time.Now()
	os.Chtimes(filepath.Join(e.dir, lockName), now, now)
}

// loadLocked reads and checks the current commit into e.m and opens it
// into e.cached (both nil when there is none or it is bad, said in rep). A
// reader that finds a blob missing reads the manifest again: a writer may
// have committed and removed it between the two reads (Lucene's readers
// retry the same way).
func (e *Entry) loadLocked(rep *Report) {
	e.m = nil
	if e.cached != nil {
		e.cached.Close()
		e.cached = nil
	}
	for attempt := 0; ; attempt++ {
		m, fi, err := e.readManifest()
		e.mStat = fi
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err == nil {
			var s *Snapshot
			s, err = e.openSnapshot(m)
			if err == nil {
				e.m, e.cached = m, s
				return
			}
			if e.lock == nil && attempt < maxReloads && e.manifestChanged() {
				continue
			}
		}
		e.dropLocked(rep, err)
		return
	}
}

// readManifest reads and decodes the manifest and checks it is this
// entry's (a hash collision or a copied folder would make it another's).
func (e *Entry) readManifest() (*Manifest, os.FileInfo, error) {
	f, err := os.Open(filepath.Join(e.dir, manifestName))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	var m *Manifest
	if e.opts.CallerOnDisk {
		m, err = readManifestHead(f, fi.Size(), manifestReadStep)
	} else {
		data := make([]byte, fi.Size())
		if _, err := f.ReadAt(data, 0); err != nil {
			return nil, fi, fmt.Errorf("%w: %v", errTruncated, err)
		}
		m, err = decodeManifest(data, false) // data is this decode's alone
	}
	if err != nil {
		return nil, fi, err
	}
	if m.RunPath != e.run || m.ConfigHash != ConfigHash(e.config) {
		return nil, fi, fmt.Errorf("%w: manifest of another run or configuration (%s)", ErrCorrupt, m.RunPath)
	}
	return m, fi, nil
}

// manifestChanged reports whether the manifest file is another than the one
// last read (a rename over it makes a new file).
func (e *Entry) manifestChanged() bool {
	fi, err := os.Stat(filepath.Join(e.dir, manifestName))
	if err != nil {
		return e.mStat != nil || e.m != nil
	}
	return e.mStat == nil || !os.SameFile(fi, e.mStat) || fi.Size() != e.mStat.Size() || !fi.ModTime().Equal(e.mStat.ModTime())
}

func (e *Entry) openSnapshot(m *Manifest) (*Snapshot, error) {
	s, err := openSnapshot(e.dir, m, e.opts, e.verified)
	if err != nil {
		return nil, err
	}
	s.onCorrupt = func(err error) { e.corrupted(m, err) }
	s.onChecked = e.checked
	return s, nil
}

// checked notes a blob whose content a snapshot checked (Blob.Check): a
// later snapshot of this process does not check it again.
func (e *Entry) checked(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.verified[name] = true
}

// corrupted is a fault met reading a blob of commit m: the writer drops the
// commit, if still current, so that no later open uses it.
func (e *Entry) corrupted(m *Manifest, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == m {
		e.dropLocked(nil, err)
	}
}

// dropLocked forgets the current commit, removing the manifest when this
// process writes the entry, and says so in rep.
func (e *Entry) dropLocked(rep *Report, err error) {
	e.m = nil
	if e.lock != nil {
		os.Remove(filepath.Join(e.dir, manifestName))
	}
	if rep != nil {
		rep.add(manifestName, "dropped", err)
	}
}

var (
	errUnfinished = errors.New("an unfinished write")
	errUnnamed    = errors.New("a blob no commit names")
	errForeign    = errors.New("not a file of the cache")
)

// collectLocked removes every file of the folder but the lock, the manifest
// and the blobs the commit names (tantivy's garbage collection, without its
// list of managed files: here everything in an entry's folder is the
// store's), and tightens the modes of what it keeps. Writer only: no other
// process writes the folder meanwhile.
func (e *Entry) collectLocked() {
	keep := map[string]bool{lockName: true}
	if e.m != nil {
		keep[manifestName] = true
		for _, b := range e.m.Blobs {
			keep[b.Name] = true
		}
	}
	for name := range e.pending {
		keep[name] = true
	}
	ents, err := os.ReadDir(e.dir)
	if err != nil {
		e.report.add(".", "unread", err)
		return
	}
	for _, d := range ents {
		name := d.Name()
		path := filepath.Join(e.dir, name)
		if keep[name] {
			if fi, err := d.Info(); err == nil && fi.Mode().Perm() != fileMode && fi.Mode().IsRegular() {
				if os.Chmod(path, fileMode) == nil {
					e.report.add(name, "tightened", fmt.Errorf("mode %#o, now %#o", fi.Mode().Perm(), fileMode))
				}
			}
			continue
		}
		why := errForeign
		switch {
		case strings.HasPrefix(name, tmpPrefix) || strings.HasPrefix(name, manifestName+".tmp"):
			why = errUnfinished
		case validBlobName(name):
			why = errUnnamed
		}
		if err := os.RemoveAll(path); err != nil {
			e.report.add(name, "not removed", err)
			continue
		}
		e.report.add(name, "removed", why)
	}
}

// writeManifest is the commit point (see Commit).
func (e *Entry) writeManifest(m *Manifest) error {
	// Blob renames first made durable, so that no crash leaves a manifest
	// naming a blob whose name was lost.
	if err := syncDir(e.dir); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	tmp := filepath.Join(e.dir, manifestName+".tmp")
	if err := writeFileSync(tmp, EncodeManifest(m)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: commit: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(e.dir, manifestName)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: commit: %w", err)
	}
	if err := syncDir(e.dir); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	fi, err := os.Stat(filepath.Join(e.dir, manifestName))
	if err == nil {
		e.mStat = fi
	}
	return nil
}

func (e *Entry) addPending(ref BlobRef, unsynced bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending[ref.Name] = ref
	if unsynced {
		e.unsynced[ref.Name] = true
	}
}

// trim bounds the cache (Options.MaxBytes); its errors are not the entry's.
func (e *Entry) trim() {
	if e.opts.MaxBytes > 0 {
		e.root.Trim(e.opts.MaxBytes, e.key)
	}
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return err
	}
	if err := f.Chmod(fileMode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
