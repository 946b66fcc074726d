// Package persist holds the run's cache entry (spec §15, issue 18) as the
// retriever lays it out on internal/store: the state blob's codec
// (persist_codec.go: the committed state taken whole, and the file states
// made again from it), the segment blob's codec (segment_codec.go), the
// file table's records and their parser state (filetable.go), and the
// memory bound of a first indexing (memory.go).
//
// Issue 29 gives it the writer too (the debounced writes, the segments
// flushed as they are made, the restore at open and the fault guard): those
// still live in the retriever (cache.go, flush.go, persist.go, fault.go).
// It knows the committed pieces (corpus) and the store, never the run
// folder on disk (runfs) or masking (deps_test.go); what it must ask of
// the run's naming it is given (FileRules).
package persist
