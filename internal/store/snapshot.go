// This file holds a Snapshot, one commit of an entry opened for reading: its
// blobs mapped read-only (or read onto the heap), each checked against the
// manifest, and the guard that turns a fault on a mapped page into an error.

package store

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Snapshot is one commit, open for reading. Its blobs stay readable until
// Close, even after a later commit drops them (see the package comment:
// unlinking a mapped file is safe). Safe for concurrent use.
type Snapshot struct {
	m      *Manifest // without its caller section with callerOnDisk
	dir    string    // the entry's folder
	onDisk bool      // Options.CallerOnDisk
	blobs  []*Blob
	byNm   map[string]*Blob

	mu        sync.Mutex
	corrupt   error
	closed    bool
	onCorrupt func(error)  // the entry's: drop the commit if this process writes it
	onChecked func(string) // the entry's: a blob's content checked in this process

	// checking is held (read) by each Check while it reads a blob, and by
	// Close (write) before it unmaps: a check in the background never
	// reads a mapping that is gone.
	checking sync.RWMutex
}

// Blob is one blob of a snapshot.
type Blob struct {
	ref    BlobRef
	dir    string // the entry's folder
	file   []byte // the whole file: mapping or heap copy
	mapped bool
	snap   *Snapshot

	checkMu  sync.Mutex
	checked  bool  // the content's checksum was computed (or the open's was, or every chunk's)
	checkErr error // and its answer
	// What CheckRange reads without the lock: the content is checked and
	// good (whole), or found bad; a bit for each chunk found good.
	whole, bad atomic.Bool
	chunkOK    []atomic.Uint64
}

// setChecked records the answer of a check of the whole content; the
// caller holds checkMu.
func (b *Blob) setChecked(err error) {
	b.checked, b.checkErr = true, err
	if err != nil {
		b.bad.Store(true)
	} else {
		b.whole.Store(true)
	}
}

// Manifest is the commit's manifest; the caller must not change it.
func (s *Snapshot) Manifest() *Manifest { return s.m }

// Caller is the caller's section of the snapshot's manifest; with
// Options.CallerOnDisk it is read from the manifest file, and a manifest
// replaced since by a later commit is an error.
func (s *Snapshot) Caller() ([]byte, error) {
	if !s.onDisk {
		return s.m.Caller, nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, manifestName))
	if err != nil {
		return nil, err
	}
	m, err := decodeManifest(data, false) // data is this call's alone
	if err != nil {
		return nil, err
	}
	if m.Generation != s.m.Generation || m.RunPath != s.m.RunPath {
		return nil, fmt.Errorf("store: the manifest of generation %d was replaced by generation %d", s.m.Generation, m.Generation)
	}
	return m.Caller, nil
}

// Blobs are the commit's blobs in the manifest's order.
func (s *Snapshot) Blobs() []*Blob { return s.blobs }

// Blob is the named blob, or nil.
func (s *Snapshot) Blob(name string) *Blob { return s.byNm[name] }

// Corrupt is the first fault met reading a mapped blob, or nil. After one,
// the caller should stop using the snapshot and index afresh.
func (s *Snapshot) Corrupt() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.corrupt
}

// MarkCorrupt marks the snapshot corrupt with err, as a failed check does
// (the writer drops the commit), for a caller that found a value in a
// blob wrong though its checksum held; it returns err.
func (s *Snapshot) MarkCorrupt(err error) error { return s.markCorrupt(err) }

// CheckAll checks every blob's content (Blob.Check) in the manifest's
// order, until ctx is done, and returns the first error: the background
// check of a snapshot opened with VerifyFrame. A blob a search checked
// already is not read again, nor one CheckAll checked.
func (s *Snapshot) CheckAll(ctx context.Context) error {
	for _, b := range s.blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Close unmaps the blobs, once the checks under way (Check, CheckAll) are
// done. No slice from Bytes may be used after it.
func (s *Snapshot) Close() error {
	s.checking.Lock()
	defer s.checking.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, b := range s.blobs {
		if b.mapped {
			errs = append(errs, unmapFile(b.file))
		}
		b.file = nil
	}
	return errors.Join(errs...)
}

// Ref is what the manifest says of the blob.
func (b *Blob) Ref() BlobRef { return b.ref }

// Mapped reports whether the content is a memory mapping (else a heap copy).
func (b *Blob) Mapped() bool { return b.mapped }

// Bytes is the content, read-only. On a mapping, a read may fault if the
// file was cut under the map by someone else; read it inside Access to get
// an error rather than a crash.
func (b *Blob) Bytes() []byte {
	return b.file[blobHeaderSize : blobHeaderSize+b.ref.Length : blobHeaderSize+b.ref.Length]
}

// Access calls fn with the content. A fault on a page of any blob of the
// snapshot while fn runs (a SIGBUS: the file was truncated under the map)
// becomes an error wrapping ErrCorrupt, and marks the snapshot corrupt; any
// other panic goes on. fn must not start goroutines that read the content:
// the guard (runtime/debug.SetPanicOnFault) is the calling goroutine's.
func (b *Blob) Access(fn func(content []byte) error) (err error) {
	if !b.mapped {
		return fn(b.Bytes())
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if addr, ok := faultAddr(r); ok && b.guards(addr) {
			err = faultError(b.ref.Name, addr)
			if b.snap != nil {
				err = b.snap.markCorrupt(err)
			}
			return
		}
		panic(r)
	}()
	return fn(b.Bytes())
}

// DropPages lets go of the process's pages of a mapped blob that it has
// read whole and keeps no slice of (a state decoded at open): they count
// in its resident memory while mapped, and stay in the page cache, from
// which a later read maps them again. Nothing for a heap copy.
func (b *Blob) DropPages() {
	if b.snap != nil {
		b.snap.checking.RLock() // not while Close unmaps
		defer b.snap.checking.RUnlock()
	}
	if b.mapped && b.file != nil {
		_ = dropPages(b.file)
	}
}

// Fault takes a fault at addr that the caller caught outside Access (a
// goroutine that reads the content through slices kept from Bytes, under
// its own runtime/debug.SetPanicOnFault): when addr lies in a mapping of
// the snapshot, the snapshot is marked corrupt as Access would, and the
// error returned wraps ErrCorrupt; else it is nil, and the fault is not
// the snapshot's. A closed snapshot maps nothing.
func (s *Snapshot) Fault(addr uintptr) error {
	s.mu.Lock()
	var hit *Blob
	if !s.closed {
		for _, b := range s.blobs {
			if b.maps(addr) {
				hit = b
				break
			}
		}
	}
	s.mu.Unlock()
	if hit == nil {
		return nil
	}
	return s.markCorrupt(faultError(hit.ref.Name, addr))
}

// Fault is Snapshot.Fault for one blob: of its snapshot when it has one
// (the snapshot is then marked corrupt), else of the blob alone.
func (b *Blob) Fault(addr uintptr) error {
	if b.snap != nil {
		return b.snap.Fault(addr)
	}
	if !b.maps(addr) {
		return nil
	}
	return faultError(b.ref.Name, addr)
}

func faultError(name string, addr uintptr) error {
	return fmt.Errorf("%w: %s: fault reading the mapping at %#x (file changed under it)", ErrCorrupt, name, addr)
}

// Verify checks the content's checksum: O(bytes), at memory speed. A
// mapped blob is read from its file, as ReadAll reads it: a pass over its
// mapping would make every page of it the process's, where its reader may
// look at a few (a 1 GB run's dictionary and statistics, 22 MB of a `runls
// search` reopen's 141 MB peak RSS). A file gone since the open (a later
// commit dropped it) is checked through the mapping instead.
func (b *Blob) Verify() error {
	var err error
	if f, ok := b.openFile(); ok {
		var buf []byte
		err = fileChecksum(f, b.ref, &buf)
		f.Close()
	} else {
		b.readWhole(0, b.ref.Length, func() {
			err = b.Access(func(c []byte) error { return checkContent(c, b.ref) })
		})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", b.ref.Name, err)
	}
	return nil
}

// willNeed asks for the content's bytes [lo, hi) of a mapped blob to be
// read ahead of a pass over them (the mapping reads no more than the page
// a fault is on: advise_linux.go).
func (b *Blob) willNeed(lo, hi int64) {
	if b.mapped {
		adviseWillNeed(b.file, blobHeaderSize+int(lo), blobHeaderSize+int(hi))
	}
}

// readWhole runs pass, a read of the content's bytes [lo, hi) whole, with
// the mapping's readahead on for them.
func (b *Blob) readWhole(lo, hi int64, pass func()) {
	if !b.mapped {
		pass()
		return
	}
	adviseSequential(b.file, blobHeaderSize+int(lo), blobHeaderSize+int(hi), pass)
}

// errClosed is Check's answer on a closed snapshot.
var errClosed = errors.New("store: snapshot closed")

// Check checks the content's checksum the first time it is asked, and gives
// the same answer after, at once: O(bytes) once a blob, at memory speed. A
// snapshot opened with VerifyFrame leaves it to the caller, who checks each
// blob before its first use (and may check the rest in the background,
// CheckAll); one opened with VerifyFull, or a blob this process wrote or
// checked before, is checked already. A blob whose checksum fails marks
// the snapshot corrupt, as a fault on its mapping does (the writer drops
// the commit): its content must not be used. Safe for concurrent use; a
// second caller waits for the first's answer.
func (b *Blob) Check() error {
	b.checkMu.Lock()
	defer b.checkMu.Unlock()
	if b.checked {
		return b.checkErr
	}
	return b.checkLocked(b.Verify, true)
}

// CheckRange checks the content's bytes [off, off+n) before their first
// use, at a finer grain than Check: the chunks (ChunkSize) that hold them,
// each against its sum in the manifest the first time it is asked, and at
// once after (a bit a chunk, read without a lock). A snapshot opened with
// VerifyFrame can so be answered from as soon as it is open, each answer
// checking the few chunks it reads. It is Check for a blob whose manifest
// had no chunk sums, and answers as Check does for a blob checked whole
// (VerifyFull, Check, or every chunk by ranges). A chunk whose sum fails is
// Check's failure: the snapshot is marked corrupt, and no part of the blob
// may be used, nor is one said good after. Safe for concurrent use.
func (b *Blob) CheckRange(off, n int64) error {
	if off < 0 || n < 0 || off > b.ref.Length-n {
		return fmt.Errorf("store: %s: range %d+%d of %d bytes", b.ref.Name, off, n, b.ref.Length)
	}
	if n == 0 || b.whole.Load() {
		return nil
	}
	if b.ref.Chunks == "" || b.chunkOK == nil {
		return b.Check()
	}
	first, last := off/ChunkSize, (off+n-1)/ChunkSize
	if !b.bad.Load() && b.chunksGood(first, last) {
		return nil
	}
	b.checkMu.Lock()
	defer b.checkMu.Unlock()
	if b.checked {
		return b.checkErr
	}
	return b.checkLocked(func() error {
		return b.Access(func(c []byte) error {
			b.willNeed(first*ChunkSize, min((last+1)*ChunkSize, b.ref.Length))
			for i := first; i <= last; i++ {
				if b.chunksGood(i, i) {
					continue
				}
				if err := checkChunk(c, b.ref, i); err != nil {
					return fmt.Errorf("%s: %w", b.ref.Name, err)
				}
				b.chunkOK[i/64].Or(1 << (i % 64))
			}
			return nil
		})
	}, false)
}

// Checked reports whether the content's bytes [off, off+n) were found good
// already (by the open, Check, CheckRange or ReadAll): a read of them checks
// nothing more. A blob found bad has nothing good.
func (b *Blob) Checked(off, n int64) bool {
	switch {
	case off < 0 || n < 0 || off > b.ref.Length-n || b.bad.Load():
		return false
	case n == 0 || b.whole.Load():
		return true
	case b.chunkOK == nil:
		return false
	}
	return b.chunksGood(off/ChunkSize, (off+n-1)/ChunkSize)
}

// chunksGood reports whether chunks first to last were all found good.
func (b *Blob) chunksGood(first, last int64) bool {
	for i := first; i <= last; i++ {
		if b.chunkOK[i/64].Load()&(1<<(i%64)) == 0 {
			return false
		}
	}
	return true
}

// checkLocked runs verify, a check of the whole content (whole) or of some
// chunks, while the snapshot stays open, and records its answer: a failure
// marks the snapshot corrupt; the content is checked whole once every chunk
// is. The caller holds checkMu.
func (b *Blob) checkLocked(verify func() error, whole bool) error {
	s := b.snap
	if s == nil {
		err := verify()
		if err != nil || whole || b.chunksGood(0, chunkCount(b.ref.Length)-1) {
			b.setChecked(err)
		}
		return err
	}
	open, err := s.whileOpen(b, verify)
	if !open {
		return err // closed: not an answer about the content
	}
	// The entry's callbacks (which take its lock) once the read is done,
	// so that no lock of the entry is waited for while Close waits.
	switch {
	case err != nil:
		err = s.markCorrupt(err)
	case !whole && !b.chunksGood(0, chunkCount(b.ref.Length)-1):
		return nil // good so far
	case s.onChecked != nil:
		s.onChecked(b.ref.Name)
	}
	b.setChecked(err)
	return err
}

// whileOpen runs verify unless s is closed (open false), holding off Close
// meanwhile.
func (s *Snapshot) whileOpen(b *Blob, verify func() error) (open bool, err error) {
	s.checking.RLock()
	defer s.checking.RUnlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return false, fmt.Errorf("%s: %w", b.ref.Name, errClosed)
	}
	return true, verify()
}

// ReadAll returns a copy of the content on the heap, read from the blob's
// file rather than its mapping (whose pages would stay the process's until
// it exits) and checked against the manifest's checksum whatever the open
// checked: for a caller that keeps a blob whole on the heap (a state read
// at open). A file gone since the open (a later commit dropped it) is
// copied from the mapping instead, inside Access. A copy whose checksum
// fails is Check's failure: the snapshot is marked corrupt, and the blob is
// not said good after.
func (b *Blob) ReadAll() ([]byte, error) {
	buf := make([]byte, b.ref.Length)
	if !b.mapped || !readFile(filepath.Join(b.dir, b.ref.Name), b.ref, buf) {
		if err := b.Access(func(c []byte) error { copy(buf, c); return nil }); err != nil {
			return nil, err
		}
	}
	err := checkContent(buf, b.ref)
	if err == nil {
		return buf, nil
	}
	err = fmt.Errorf("%s: %w", b.ref.Name, err)
	b.checkMu.Lock()
	defer b.checkMu.Unlock()
	if b.snap != nil {
		err = b.snap.markCorrupt(err)
	}
	b.setChecked(err)
	return nil, err
}

// readFile reads the content of the blob file at path into buf; false when
// it cannot (gone, or not the length ref says).
func readFile(path string, ref BlobRef, buf []byte) bool {
	f, ok := openBlobFile(path, ref)
	if !ok {
		return false
	}
	defer f.Close()
	_, err := f.ReadAt(buf, blobHeaderSize)
	return err == nil
}

// openFile opens a mapped blob's file to read its content rather than its
// mapping; false for a blob not mapped, or a file gone or not its size.
func (b *Blob) openFile() (*os.File, bool) {
	if !b.mapped {
		return nil, false
	}
	return openBlobFile(filepath.Join(b.dir, b.ref.Name), b.ref)
}

// openBlobFile opens the blob file at path when its size is ref's.
func openBlobFile(path string, ref BlobRef) (*os.File, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != blobHeaderSize+ref.Length+blobFooterSize {
		f.Close()
		return nil, false
	}
	return f, true
}

// faultAddr is the faulting address of a panic SetPanicOnFault raised.
func faultAddr(r any) (uintptr, bool) {
	f, ok := r.(interface{ Addr() uintptr })
	if !ok {
		return 0, false
	}
	return f.Addr(), true
}

// guards reports whether addr is in a mapping of b's snapshot (or of b
// alone, before it joins one).
func (b *Blob) guards(addr uintptr) bool {
	if b.snap == nil {
		return b.maps(addr)
	}
	for _, o := range b.snap.blobs {
		if o.maps(addr) {
			return true
		}
	}
	return false
}

func (b *Blob) maps(addr uintptr) bool {
	if !b.mapped || len(b.file) == 0 {
		return false
	}
	start := uintptrOf(b.file)
	// The map covers whole pages: a fault past the file's last byte but in
	// its last page is still this mapping's.
	return start <= addr && addr < start+uintptr(roundPage(len(b.file)))
}

func (s *Snapshot) markCorrupt(err error) error {
	s.mu.Lock()
	first := s.corrupt == nil
	if first {
		s.corrupt = err
	}
	s.mu.Unlock()
	if first && s.onCorrupt != nil {
		s.onCorrupt(err)
	}
	return err
}

// openSnapshot opens every blob m names in dir and checks its frame against
// m (O(1) a blob); with full, its content's checksum too, unless verified
// holds it already (a name is never reused, so a blob checked once in this
// process needs only its frame checked again).
func openSnapshot(dir string, m *Manifest, opts Options, verified map[string]bool) (*Snapshot, error) {
	read, full := opts.Read, opts.Verify == VerifyFull
	s := &Snapshot{m: m, dir: dir, onDisk: opts.CallerOnDisk, byNm: make(map[string]*Blob, len(m.Blobs))}
	var buf []byte // the reads of fileChecksum
	for _, ref := range m.Blobs {
		b, err := openBlob(dir, ref, read, full && !verified[ref.Name], &buf)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: %w", ref.Name, err)
		}
		b.snap = s
		s.blobs = append(s.blobs, b)
		s.byNm[ref.Name] = b
	}
	for _, b := range s.blobs {
		switch {
		case verified[b.ref.Name]:
			b.setChecked(nil)
			continue
		case b.checked: // by openBlob, from the file
			verified[b.ref.Name] = true
			continue
		case !full:
			continue // Blob.Check or CheckRange, at the caller's first use
		}
		if err := b.Verify(); err != nil {
			s.Close()
			return nil, err
		}
		verified[b.ref.Name] = true
		b.setChecked(nil)
	}
	return s, nil
}

// openBlob opens the blob ref names in dir and checks its frame; with sum,
// the content of a blob to be mapped is checked too, from the file (the
// caller checks a heap copy itself), in buf.
func openBlob(dir string, ref BlobRef, read ReadMode, sum bool, buf *[]byte) (*Blob, error) {
	f, err := os.Open(filepath.Join(dir, ref.Name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errMissing
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size != blobHeaderSize+ref.Length+blobFooterSize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", errTruncated, size, blobHeaderSize+ref.Length+blobFooterSize)
	}
	// A mapped blob's checksum is computed from the file, not the mapping:
	// a pass over the mapping would make every page of the entry the
	// process's own (its RSS) until it exits, where an answer reads a few.
	mapIt := read != ReadHeap && canMap
	if sum && mapIt {
		if err := fileChecksum(f, ref, buf); err != nil {
			return nil, err
		}
	}
	b := &Blob{ref: ref, dir: dir}
	if ref.Chunks != "" {
		b.chunkOK = make([]atomic.Uint64, (chunkCount(ref.Length)+63)/64)
	}
	if mapIt {
		b.file, err = mapFile(f, size, read == ReadMapAligned)
		b.mapped = true
		adviseRandom(b.file) // advise_linux.go: a fault reads its page, not a readahead window
	} else {
		b.file = make([]byte, size)
		_, err = io.ReadFull(f, b.file)
	}
	if err != nil {
		return nil, err
	}
	// The frame is read inside the guard too: the file may be cut between
	// the stat and the read.
	err = b.Access(func([]byte) error { return checkFrame(b.file, ref) })
	if err != nil {
		if b.mapped {
			unmapFile(b.file)
		}
		return nil, err
	}
	if sum && mapIt {
		b.setChecked(nil)
	}
	return b, nil
}

// fileChecksum checks the CRC-32C of a blob's content read from its file,
// a buffer at a time (buf, kept for the next blob).
func fileChecksum(f *os.File, ref BlobRef, buf *[]byte) error {
	if cap(*buf) < fileChecksumBuffer {
		*buf = make([]byte, fileChecksumBuffer)
	}
	p := (*buf)[:cap(*buf)]
	crc := uint32(0)
	for off := int64(0); off < ref.Length; {
		n := min(int64(len(p)), ref.Length-off)
		if _, err := f.ReadAt(p[:n], blobHeaderSize+off); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: read %d bytes of %d", errTruncated, off, ref.Length)
			}
			return err
		}
		crc = crc32.Update(crc, castagnoli, p[:n])
		off += n
	}
	if crc != ref.Checksum {
		return fmt.Errorf("%w: content checksum %08x, want %08x", ErrCorrupt, crc, ref.Checksum)
	}
	return nil
}

// fileChecksumBuffer is fileChecksum's read: large enough that the calls
// cost nothing beside the copy, small enough to stay in the cache.
const fileChecksumBuffer = 1 << 20
