package corpus

// This file holds the segment: the engine's postings of one batch beside
// the pieces' own columns.

import "runls/retriever/internal/bm25"

// A Segment holds the pieces (documents) indexed in one batch: the engine's
// segment (postings, lengths, the "given once" key of each piece, its file
// as its group, dead bits) and the run folder's columns of each piece
// (pieceColumns), both by document id. It is immutable once committed, but
// for its dead-doc bits, which are written only under the index's write
// lock.
type Segment struct {
	*bm25.Segment
	Columns
	// Mapped: read back from the cache entry's mapping (persist), not
	// built on the heap.
	Mapped bool
}

// FileOf returns the file id of piece d: the engine keeps it as the
// piece's group.
func (s *Segment) FileOf(d uint32) uint32 { return s.Group(d) }
