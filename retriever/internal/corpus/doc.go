// Package corpus holds what the committed pieces share with the cache and
// the search: the text hash a piece's key and a told message's hash are
// made with (texthash.go), and the conversation ids (convs.go).
//
// Issue 29 gives it the committed state whole (file states, segments and
// their pieces, the batch builder, merges, and the lookups): those still
// live in the retriever (file.go, segment.go, pieces.go, builder.go,
// merge.go, commit.go). It calls no cache and reads no file (deps_test.go).
package corpus
