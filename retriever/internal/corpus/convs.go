package corpus

import "sync"

// Convs is the conversation ids of a run's records: id 0 is a record with
// no conversation field; the others are given to ids as written ("-"
// included) in the order they are first met, and never taken back, so
// that the committed pieces and record tables hold ids, not strings. Safe
// for concurrent use: ingesting workers give ids while searches look them
// up.
type Convs struct {
	mu    sync.Mutex
	names []string // by id; names[0] is ""
	ids   map[string]uint32
}

// ID returns the id of name, giving it the next id when it has none.
func (c *Convs) ID(name string) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.ids[name]; ok {
		return id
	}
	if c.names == nil {
		c.names = []string{""} // id 0: no conversation field
	}
	if c.ids == nil {
		c.ids = map[string]uint32{}
	}
	id := uint32(len(c.names))
	c.names = append(c.names, name)
	c.ids[name] = id
	return id
}

// Name returns the name of id.
func (c *Convs) Name(id uint32) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[id]
}

// Lookup returns the id of name, if it has one.
func (c *Convs) Lookup(name string) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[name]
	return id, ok
}

// Len is how many ids were given, id 0 included.
func (c *Convs) Len() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return uint32(len(c.names))
}

// Names returns a copy of the names by id.
func (c *Convs) Names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.names...)
}

// Restore replaces the ids with names (by id, names[0] being ""), as a
// cache entry read back holds them.
func (c *Convs) Restore(names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = names
	c.ids = make(map[string]uint32, len(names))
	for i, n := range names[1:] {
		c.ids[n] = uint32(i + 1)
	}
}
