package bm25

// This file holds Sparse, a column of the few documents that have a value.

import "slices"

// Sparse holds a value for a few documents of a segment (the rare ones that
// do not fit a narrow column, or that have a value at all), or a few terms,
// by id, ascending: two flat slices that a lookup binary-searches, where a
// Go map would have to be built again for a segment read back from disk.
// Its zero value is empty.
type Sparse[T any] struct {
	docs []uint32
	vals []T
}

// Set gives document d its value. Documents are set in increasing order,
// as builders add them; setting one again replaces its value.
func (c *Sparse[T]) Set(d uint32, v T) {
	if n := len(c.docs); n > 0 && c.docs[n-1] >= d {
		i, found := slices.BinarySearch(c.docs, d)
		if found {
			c.vals[i] = v
			return
		}
		c.docs, c.vals = slices.Insert(c.docs, i, d), slices.Insert(c.vals, i, v)
		return
	}
	c.docs, c.vals = append(c.docs, d), append(c.vals, v)
}

// Get returns document d's value, and whether it has one.
func (c *Sparse[T]) Get(d uint32) (T, bool) {
	i, found := slices.BinarySearch(c.docs, d)
	if !found {
		var zero T
		return zero, false
	}
	return c.vals[i], true
}

// Ptr returns a pointer to document d's value, or nil: the value stays
// where it is while the column is not set again.
func (c *Sparse[T]) Ptr(d uint32) *T {
	i, found := slices.BinarySearch(c.docs, d)
	if !found {
		return nil
	}
	return &c.vals[i]
}

// Len returns how many documents have a value.
func (c *Sparse[T]) Len() int { return len(c.docs) }

// Each calls fn for every document with a value, in increasing order.
func (c *Sparse[T]) Each(fn func(d uint32, v T)) {
	for i, d := range c.docs {
		fn(d, c.vals[i])
	}
}

// Clip drops the slices' spare room, for a column that is done.
func (c *Sparse[T]) Clip() {
	c.docs, c.vals = slices.Clip(c.docs), slices.Clip(c.vals)
}

// Last returns the largest id with a value (0 when empty).
func (c *Sparse[T]) Last() uint32 {
	if len(c.docs) == 0 {
		return 0
	}
	return c.docs[len(c.docs)-1]
}
