// Package bm25 is runls's inverted index engine: terms, BM25 scoring and the
// bounds that pruned top-k search takes from impacts. It knows documents,
// partitions of the statistics and keys, never files or runs: it imports
// only the standard library, and no package that reads files (deps_test.go
// fails the build's tests when one appears).
//
// The engine moves here from retriever step by step (issue 16): so far the
// tokenizer and term table (terms.go) and the scoring arithmetic
// (params.go); the segments, posting lists and scoring paths described
// below are still retriever's, and come next.
//
// # How a query runs
//
// A term with at least 128 postings in a segment keeps its highest-impact
// ~1/32 (large tf in a short document) as a list apart from the rest, with
// those documents' lengths beside it. A query first walks the rare lists of
// every segment (rare terms and those high lists), the segments whose list
// can score highest first, each document scored whole (prefill): a block of
// postings is decoded at a time, its documents that cannot reach the
// threshold with the most the other terms add are left (frequent terms have
// a bit per document, so absence is a bit test), and the lengths of the rest
// are read in one loop, so that their cache misses overlap. When all terms
// are rare and alike, every posting is scored instead (exhaustive); when no
// term alone can reach the threshold, a bit per document finds the documents
// in two lists or more, and only those are scored (pairs). Then the best
// blocks of the frequent lists (champion blocks), then MaxScore with
// block-max bounds (each block of 128 postings keeps its largest impact,
// exact at the index's average length) on what is left; one list alone is
// scored a block at a time, its blocks out of reach skipped (single). A
// frequent term is bounded in a document by the largest tf of its window of
// 1024 documents. A query of several terms whose postings hold 128 KiB or
// more searches two halves of the segments side by side, each half pruning
// with the higher of the two thresholds. A query's buffers come from a pool,
// so a query allocates some 27 KB.
//
// Every path adds a document's term scores in query term order (SumInOrder),
// so a document gets the same score to the last bit whichever path found it;
// the tests force each path and compare it with scoring every posting.
package bm25
