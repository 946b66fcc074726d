package retriever

import (
	"fmt"
	"os"
	"sync"
)

// handleCache keeps recently read files open, so that making a result does
// not open a file (through os.Root: a system call per path element) for each
// piece. Handles are keyed by the file's identity (device and inode): while a
// handle is open its inode cannot be reused, so a replaced file never reads
// through a stale handle.
type handleCache struct {
	mu    sync.Mutex
	max   int
	clock uint64
	m     map[[2]uint64]*handle
}

type handle struct {
	f       *os.File
	key     [2]uint64
	refs    int
	used    uint64
	evicted bool
}

const maxOpenHandles = 512

// acquire returns an open handle on fs's file, opening it when needed.
func (c *handleCache) acquire(ix *Index, fs *fileState) (*handle, error) {
	key := [2]uint64{fs.dev, fs.ino}
	c.mu.Lock()
	c.clock++
	if h, ok := c.m[key]; ok {
		h.refs++
		h.used = c.clock
		c.mu.Unlock()
		return h, nil
	}
	c.mu.Unlock()

	f, err := openFile(ix.fsys, fs.rel)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if dev, ino := fileID(info); dev != fs.dev || ino != fs.ino {
		f.Close()
		return nil, fmt.Errorf("%s: replaced since it was indexed", fs.rel)
	}
	h := &handle{f: f, key: key, refs: 1}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[2]uint64]*handle{}
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

// release gives a handle back; an evicted one is closed with its last user.
func (c *handleCache) release(h *handle) {
	c.mu.Lock()
	h.refs--
	closeIt := h.evicted && h.refs == 0
	c.mu.Unlock()
	if closeIt {
		h.f.Close()
	}
}

func (c *handleCache) evictOldest() {
	var oldest *handle
	for _, h := range c.m {
		if oldest == nil || h.used < oldest.used {
			oldest = h
		}
	}
	delete(c.m, oldest.key)
	oldest.evicted = true
	if oldest.refs == 0 {
		oldest.f.Close()
	}
}

// closeAll closes every handle not in use, and marks the rest to be closed.
func (c *handleCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, h := range c.m {
		delete(c.m, k)
		h.evicted = true
		if h.refs == 0 {
			h.f.Close()
		}
	}
}
