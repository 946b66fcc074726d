package bm25

// This file holds the term dictionary: global term ids, shared by every
// segment of an index.

import "sync"

// A Dict gives each distinct term of an index its global id, in the order
// terms were first seen. It is safe for concurrent use: workers assign the
// ids of their batches while searches look terms up.
//
// It is a Go map: it grows with every batch, and is asked only for the few
// terms of a query and once a term a batch; a persisted index writes it out
// as a sorted list (issue 18) and builds the map again when it opens.
type Dict struct {
	mu  sync.RWMutex
	ids map[string]uint32
}

// NewDict returns an empty dictionary.
func NewDict() *Dict { return &Dict{ids: map[string]uint32{}} }

// Lookup returns the ids of the terms the dictionary holds, in the order of
// terms; the others are left out.
func (dc *Dict) Lookup(terms []string) []uint32 {
	ids := make([]uint32, 0, len(terms))
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	for _, n := range terms {
		if id, ok := dc.ids[n]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// Assign maps a builder's local term ids to global ones, giving new terms
// new ids.
func (dc *Dict) Assign(t *TermTable) []uint32 {
	ids := make([]uint32, t.Len())
	dc.mu.Lock()
	defer dc.mu.Unlock()
	for i := range ids {
		term := t.Term(int32(i))
		id, ok := dc.ids[string(term)]
		if !ok {
			id = uint32(len(dc.ids))
			dc.ids[string(term)] = id
		}
		ids[i] = id
	}
	return ids
}

// Len returns how many terms the dictionary holds.
func (dc *Dict) Len() int {
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	return len(dc.ids)
}

// Terms returns every term by its id.
func (dc *Dict) Terms() []string {
	dc.mu.RLock()
	defer dc.mu.RUnlock()
	names := make([]string, len(dc.ids))
	for term, id := range dc.ids {
		names[id] = term
	}
	return names
}
