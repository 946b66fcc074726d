// Package persist holds the run's cache entry (spec §15, issue 18) as the
// retriever lays it out on internal/store: the writer (writer.go: opened on
// the entry the retriever's configuration names, it restores the entry's
// last commit into the index, persist.go, and writes the index's commits,
// debounced), the segments flushed to the entry as they are made
// (flush.go), a restored segment's bytes checked by range at their first
// use (check.go), the catch of a fault on a mapped page or a failed check
// (fault.go: Guard, and
// the fault injection of the runls_faultinject build, fault_inject.go), the
// state blob's codec (persist_codec.go), the segment blob's codec
// (segment_codec.go), the file table's records and their parser state
// (filetable.go), and the memory bound of a first indexing (memory.go).
// hooks.go is what the retriever's tests reach of a writer.
//
// It knows the committed pieces (corpus) and the store, never the run
// folder on disk (runfs) or masking (deps_test.go). What it asks of the
// index it is given as a Host: its lock and state, its logs, how to forget
// everything and index afresh, the run's naming (FileRules). The reopen's
// classification of a run's files against the file table is following's
// rules, and stays in the retriever (reopen.go).
package persist
