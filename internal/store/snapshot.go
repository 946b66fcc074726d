// This file holds a Snapshot, one commit of an entry opened for reading: its
// blobs mapped read-only (or read onto the heap), each checked against the
// manifest, and the guard that turns a fault on a mapped page into an error.

package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
)

// Snapshot is one commit, open for reading. Its blobs stay readable until
// Close, even after a later commit drops them (see the package comment:
// unlinking a mapped file is safe). Safe for concurrent use.
type Snapshot struct {
	m     *Manifest
	blobs []*Blob
	byNm  map[string]*Blob

	mu        sync.Mutex
	corrupt   error
	closed    bool
	onCorrupt func(error) // the entry's: drop the commit if this process writes it
}

// Blob is one blob of a snapshot.
type Blob struct {
	ref    BlobRef
	file   []byte // the whole file: mapping or heap copy
	mapped bool
	snap   *Snapshot
}

// Manifest is the commit's manifest; the caller must not change it.
func (s *Snapshot) Manifest() *Manifest { return s.m }

// Caller is the caller's section of the manifest.
func (s *Snapshot) Caller() []byte { return s.m.Caller }

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

// Close unmaps the blobs. No slice from Bytes may be used after it.
func (s *Snapshot) Close() error {
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

// Verify checks the content's checksum: O(bytes), at memory speed.
func (b *Blob) Verify() error {
	err := b.Access(func(c []byte) error { return checkContent(c, b.ref) })
	if err != nil {
		return fmt.Errorf("%s: %w", b.ref.Name, err)
	}
	return nil
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
func openSnapshot(dir string, m *Manifest, read ReadMode, full bool, verified map[string]bool) (*Snapshot, error) {
	s := &Snapshot{m: m, byNm: make(map[string]*Blob, len(m.Blobs))}
	for _, ref := range m.Blobs {
		b, err := openBlob(dir, ref, read)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: %w", ref.Name, err)
		}
		b.snap = s
		s.blobs = append(s.blobs, b)
		s.byNm[ref.Name] = b
	}
	if full {
		for _, b := range s.blobs {
			if verified[b.ref.Name] {
				continue
			}
			if err := b.Verify(); err != nil {
				s.Close()
				return nil, err
			}
			verified[b.ref.Name] = true
		}
	}
	return s, nil
}

func openBlob(dir string, ref BlobRef, read ReadMode) (*Blob, error) {
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
	b := &Blob{ref: ref}
	if read == ReadMap && canMap {
		b.file, err = mapFile(f, size)
		b.mapped = true
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
	return b, nil
}
