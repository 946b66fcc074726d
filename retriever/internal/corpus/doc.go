// Package corpus holds the committed pieces of a run: the state an update
// commits and a search reads (committed.go: the files, segments, agents,
// episodes, conversation ids, statistics and dictionary, with the lookups
// made of them), what the index knows of one file (file.go), what a
// search's filter and tie order read of each (filekeys.go), the segments
// (segment.go) and their pieces' own columns (pieces.go), the builder of
// one batch (builder.go), the commit of a batch (commit.go), merges
// (merge.go), the text hash (texthash.go) and the conversation ids
// (convs.go).
//
// It reads no file and calls no cache (deps_test.go): the retriever reads
// the files into a Builder, lays the batch out (State.LayOut), has the
// cache flush the segment, and then commits it (State.Commit) under its own
// lock, so that the committed pieces never call the cache.
package corpus
