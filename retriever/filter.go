package retriever

// This file holds the seam between the scoring paths and the rules of what
// may be a hit: the scoring paths know documents of segments and ask a
// docFilter, only for documents whose score can still enter the top k.

// docFilter says which documents of a segment may be hits, and tags each it
// accepts with a value of its own that the hit keeps (retriever's: the
// piece's file id), so that the tie order and the results read it without
// looking the document up again.
type docFilter interface {
	// cursor returns a fresh cursor over s's documents, for one walk in
	// increasing document order.
	cursor(s *segment) docCursor
	// accept reports whether document d of s may be a hit, asked in any
	// order, and its tag.
	accept(s *segment, d uint32) (bool, uint32)
}

// docCursor answers for the documents of one segment asked in increasing
// order, so that what holds for a run of documents is decided once a run.
type docCursor interface {
	// at reports whether document d (at or after the last one asked) may
	// be a hit, and its tag.
	at(d uint32) (bool, uint32)
}
