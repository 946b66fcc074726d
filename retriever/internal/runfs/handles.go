package runfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// NewHandles returns a cache that keeps at most max files open.
func NewHandles(max int) Handles { return Handles{max: max} }

// Handles keeps recently read files open, so that making a result does
// not open a file (through os.Root: a system call per path element) for each
// piece. Handles are keyed by the file's identity (device and inode): while a
// handle is open its inode cannot be reused, so a replaced file never reads
// through a stale handle.
type Handles struct {
	mu    sync.Mutex
	max   int
	clock uint64
	m     map[[2]uint64]*Handle
}

// Handle is an open file of the cache, F, until it is released.
type Handle struct {
	F *os.File
	// m maps the file as it was at the handle's second ReadMapped (nil: not
	// mapped yet, or it could not be; mapOnce): a file read once, as most
	// of a big run's are, costs no mapping and no fault.
	m       atomic.Pointer[[]byte]
	reads   atomic.Int32
	mapOnce sync.Once
	key     [2]uint64
	refs    int
	used    uint64
	evicted bool
}

const MaxOpenHandles = 512

// Acquire returns an open handle on the file rel of the run (fsys), known
// as device dev and inode ino, opening it when needed; a file at rel that
// is another is refused (replaced since it was indexed).
func (c *Handles) Acquire(fsys *os.Root, rel string, dev, ino uint64) (*Handle, error) {
	key := [2]uint64{dev, ino}
	c.mu.Lock()
	c.clock++
	if h, ok := c.m[key]; ok {
		h.refs++
		h.used = c.clock
		c.mu.Unlock()
		return h, nil
	}
	c.mu.Unlock()

	f, err := openReadBack(fsys, rel)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if d, i := FileID(info); d != dev || i != ino {
		f.Close()
		return nil, fmt.Errorf("%s: replaced since it was indexed", rel)
	}
	h := &Handle{F: f, key: key, refs: 1}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[2]uint64]*Handle{}
	}
	if old, ok := c.m[key]; ok { // opened meanwhile by another search
		old.refs++
		old.used = c.clock
		h.close()
		return old, nil
	}
	h.used = c.clock
	c.m[key] = h
	if len(c.m) > c.max {
		c.evictOldest()
	}
	return h, nil
}

// openReadBack opens rel as OpenFile does, asking the system not to update
// its access time on reads where it lets the file's owner ask (O_NOATIME;
// another's file is opened plainly): deciding whether to write it was a
// tenth of a result line's read through a cold handle (issue 33), and a
// search's read-back is not an access a user wants recorded.
func openReadBack(fsys *os.Root, rel string) (*os.File, error) {
	if noATime != 0 {
		f, err := fsys.OpenFile(rel, openFlags|noATime, 0)
		if !errors.Is(err, syscall.EPERM) {
			return f, err
		}
	}
	return OpenFile(fsys, rel)
}

// Release gives a handle back; an evicted one is closed with its last user.
func (c *Handles) Release(h *Handle) {
	c.mu.Lock()
	h.refs--
	closeIt := h.evicted && h.refs == 0
	c.mu.Unlock()
	if closeIt {
		h.close()
	}
}

// close unmaps and closes the handle's file, once no one reads it.
func (h *Handle) close() {
	if m := h.m.Load(); m != nil {
		unmapFile(*m)
	}
	h.F.Close()
}

// ReadMapped reads len(p) bytes at off as F.ReadAt does, but from the
// file's mapping when they lie within it: no system call, where a pread of
// a search's item, its file's pages cold by then, was more than half of
// the item (issue 33). Bytes past the mapping (the file grew since it was
// opened) are read with F.ReadAt. A file that shrank under the mapping
// faults on the pages past its end: the fault is caught, never a crash,
// and the bytes are read with F.ReadAt, which reads what is left of them.
// The page a shrunk file's end is in reads as zeros past that end, where
// F.ReadAt reads fewer bytes: bytes read with a NUL among them are read
// again with F.ReadAt (rare in an indexed file: a NUL in its first 8 KiB
// makes a file binary, spec §1; a later one costs that read twice), so
// that what ReadMapped reads is what F.ReadAt would have, short of a write
// racing the read. A masked piece's
// text cannot be checked against its key, only its length: zeros that
// passed for the cut line's bytes made a stale item (the review of
// 81a5add).
func (h *Handle) ReadMapped(p []byte, off int64) (int, error) {
	m := h.mapping()
	if off < 0 || off > int64(len(m))-int64(len(p)) || len(m) == 0 || !copyGuarded(p, m[off:]) || bytes.IndexByte(p, 0) >= 0 {
		return h.F.ReadAt(p, off)
	}
	return len(p), nil
}

// mapping is the file's mapping, made at the handle's second read (nil
// before, or when it cannot be).
func (h *Handle) mapping() []byte {
	if m := h.m.Load(); m != nil {
		return *m
	}
	if h.reads.Add(1) < 2 {
		return nil
	}
	h.mapOnce.Do(func() {
		// Its size now, not at its open: a run's live log grows while its
		// handle is kept, and what lies past the mapping is read with pread
		// (as is every byte of a file whose size cannot be had).
		if info, err := h.F.Stat(); err == nil {
			if m := mapFile(h.F, info.Size()); m != nil {
				h.m.Store(&m)
			}
		}
	})
	if m := h.m.Load(); m != nil {
		return *m
	}
	return nil
}

// LineMapped copies into p, from the file's mapping, the start of the line
// that begins after skip line ends ("\n") from off: len(p) bytes from
// there (those of the lines after it too, as F.ReadAt would read them) or,
// when toLineEnd, up to its "\n" where that comes first; it returns how
// many. Only the bytes before the line's start (and up to 127 past it:
// line ends are counted 128 bytes at a time) and those copied are touched,
// where a read of the line's block through ReadMapped copied the
// whole block (16 lines; issue 33: a cold cheap search's read-backs, 142
// misses past the last level in cachegrind, are 103 this way, in the same
// time) and, for a JSON line's prose, 64 KiB from the line's start. It
// reports false, copying nothing the caller may use, where the mapping
// cannot answer as F.ReadAt would, and the caller reads as it did before
// (ReadMapped, F.ReadAt): no mapping yet (ReadMapped makes it, at a
// handle's second read, and LineMapped counts no read), a line or bytes
// past the mapping's end (the file grew since, or the line is the file's
// last and shorter than p), a fault (the file was cut under the mapping:
// caught as ReadMapped's), or a NUL among the bytes scanned or copied (the
// zeros past a cut file's end in its last page, or the file's own).
func (h *Handle) LineMapped(p []byte, off int64, skip int, toLineEnd bool) (n int, ok bool) {
	mp := h.m.Load()
	if mp == nil || off < 0 || off > int64(len(*mp)) {
		return 0, false
	}
	m := *mp
	if !guarded(m, func() { n, ok = lineAt(p, m[off:], skip, toLineEnd) }) || !ok {
		return 0, false
	}
	return n, true
}

// lineAt is LineMapped within b, unguarded: false when the line or the
// bytes to copy lie past b's end, or a NUL is among them or before them.
func lineAt(p, b []byte, skip int, toLineEnd bool) (int, bool) {
	start := 0
	for skip > 0 {
		// The line ends counted a chunk at a time, the next chunk's
		// address known before this one's bytes are: the processor loads
		// the chunks together, where finding one line end after another
		// waited for each line's bytes in turn (slower than the block's
		// copy).
		c := b[start:min(start+scanChunk, len(b))]
		if len(c) == 0 {
			return 0, false
		}
		if k := bytes.Count(c, []byte{'\n'}); k < skip {
			skip -= k
			start += len(c)
			continue
		}
		for ; skip > 0; skip-- {
			start += bytes.IndexByte(b[start:], '\n') + 1
		}
	}
	if bytes.IndexByte(b[:start], 0) >= 0 {
		return 0, false
	}
	src := b[start:min(start+len(p), len(b))]
	ended := false
	if toLineEnd {
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			src, ended = src[:i+1], true
		}
	}
	if !ended && len(src) < len(p) {
		return 0, false // past the end: the file's end, or the mapping's only
	}
	n := copy(p, src)
	if bytes.IndexByte(p[:n], 0) >= 0 {
		return 0, false
	}
	return n, true
}

// scanChunk is how many bytes lineAt counts the line ends of at a time.
const scanChunk = 128

// copyGuarded copies src into dst, false when a page of src faults (a
// mapped file cut under it).
func copyGuarded(dst, src []byte) bool {
	return guarded(src, func() { copy(dst, src) })
}

// guarded runs read, which reads src (a mapping), false when a page of src
// faults (a mapped file cut under it). Only a fault within src is caught:
// the flag turns every fault into a panic, a stray pointer's too, which
// must not pass for a cut file.
func guarded(src []byte, read func()) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if !caughtFault(r, src) {
				panic(r)
			}
			ok = false
		}
	}()
	read()
	return true
}

// caughtFault reports whether r, recovered, is a memory fault at a byte of
// src.
func caughtFault(r any, src []byte) bool {
	f, fault := r.(interface{ Addr() uintptr })
	return fault && within(f.Addr(), src)
}

// within reports whether addr is the address of a byte of b.
func within(addr uintptr, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return addr >= start && addr-start < uintptr(len(b))
}

func (c *Handles) evictOldest() {
	var oldest *Handle
	for _, h := range c.m {
		if oldest == nil || h.used < oldest.used {
			oldest = h
		}
	}
	delete(c.m, oldest.key)
	oldest.evicted = true
	if oldest.refs == 0 {
		oldest.close()
	}
}

// CloseAll closes every handle not in use, and marks the rest to be closed.
func (c *Handles) CloseAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, h := range c.m {
		delete(c.m, k)
		h.evicted = true
		if h.refs == 0 {
			h.close()
		}
	}
}
