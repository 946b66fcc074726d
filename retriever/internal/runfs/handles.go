package runfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
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
	F       *os.File
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
		f.Close()
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
		h.F.Close()
	}
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
		oldest.F.Close()
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
			h.F.Close()
		}
	}
}
