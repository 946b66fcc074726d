package retriever

import (
	"sync/atomic"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// committed is the state an update commits and a search reads, under the
// index's lock (Index.mu): the files, the segments and their statistics,
// the agents, episodes and conversation ids, and what notices found in
// them; with the lookups a search and a commit make of it (answer.go,
// evidence.go, commit.go, merge.go). Issue 29 gives it to internal/corpus;
// here it is first a value of its own, which Index embeds.
type committed struct {
	files    map[string]*fileState // by slash path relative to the root
	byID     []*fileState          // by id; nil once removed
	segments []*segment
	postings []*bm25.Segment // segments' engine parts, in order (setSegments)
	agents   []string
	agentIDs map[string]uint32
	stats    bm25.Stats      // by agent id as the partition
	episodes map[string]bool // episode folder names, agents or not
	nextID   uint32
	dict     *bm25.Dict    // the terms' global ids (its own lock)
	seed     uint64        // of the pieces' text hashes (internal/corpus/texthash.go)
	convs    corpus.Convs  // conversation ids (their own lock)
	commits  atomic.Uint64 // commits made (see fresh)
	facts    factMemo      // what notices found in the files, for the state committed (answer.go)
}
