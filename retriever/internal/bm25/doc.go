// Package bm25 is runls's inverted index engine: terms, the term dictionary,
// the builder, immutable segments and their postings, BM25 statistics by
// partition, merging, and pruned top-k search over a filter. It knows
// documents, groups, partitions and keys, never files or runs: it imports
// only the standard library, and no package that reads files (deps_test.go
// fails the build's tests when one appears).
//
// # Documents, groups, partitions and keys
//
// A Builder takes one batch of documents: each is tokenized (Count), then
// added (Add) with a key, a group and a partition, and gets the next
// document id of the batch; Finish lays the batch out as a Segment, once the
// owner has made its terms' ids global (Dict.Assign) and counted the batch
// in the Stats (Stats.Add). A segment is immutable but for its dead bits
// (Kill, Stats.Retract, Stats.Drop), which its owner writes while no search
// reads it; Merge writes the live documents of several into one and says
// where each went, and MergeCandidates says which to merge.
//
//   - A key stands for a document's text: of the documents of one key, a
//     search returns the best only.
//   - A group is a value the owner gives runs of consecutive documents (in
//     retriever, the file id): a Filter decides what it can once a group
//     (Filter.Group), a document at a time only where it cannot
//     (Filter.Check), and a hit carries its group.
//   - A partition splits the statistics (in retriever, the agent): a query
//     over one takes its idf and average length from that partition's
//     documents only.
//
// Search (Searcher.Search) is asked for the best K documents of some terms
// that a Filter accepts, equal scores in the owner's tie order (TieOrder).
// The owner names segments by their place in the slice it gives, and so
// do the hits and the filter.
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
// are read in one loop, so that their cache misses overlap, and then, once
// they are scored, the keys of those the heap would take (as single and the
// exhaustive paths do too: a cold query's lengths and keys are each a page
// of their columns). When all terms are rare and alike, every posting is
// scored instead (exhaustive); when no term alone can reach the threshold, a
// bit per document finds the documents in two lists or more, and only those
// are scored (pairs). Then the best
// blocks of the frequent lists (champion blocks; a segment's one list left,
// of one block, is single's to score), then MaxScore with
// block-max bounds (each block of 128 postings keeps its largest impact,
// exact at the index's average length) on what is left; one list alone is
// scored a block at a time, its blocks out of reach skipped (single). A
// frequent term is bounded in a document by the largest tf of its window of
// 1024 documents. A query of several terms whose postings hold 128 KiB or
// more searches two halves of the segments side by side, each half pruning
// with the higher of the two thresholds. A query's buffers come from a pool,
// so a query allocates some 27 KB.
//
// Documents that tie by the thousand (templated log lines) are out of reach
// of no bound, as a bound is an upper one: each is scored. What makes them
// cheap: a Query's GroupOrder (the tie order's first keys, by group) decides a
// tie with the worst kept hit once for a run of a group's documents, and its
// DocOrder (the tie order follows the documents' within a group of a
// segment) decides a tie with a document of the worst's own group by their
// numbers, so that a tied document that cannot enter is left before it is
// offered; and an owner's ranking without its rules and with them is one
// search (SearchNested), so such documents are scored once, not once a
// ranking.
//
// # Persisted
//
// A segment, the dictionary and the statistics each have an encoding
// (AppendEncoded) of raw aligned sections that their decoder reads in
// place (DecodeSegment, DecodeDict, DecodeStats): from a mapped file,
// nothing is built per term or document. What changes after a decode goes
// to the heap beside the bytes: a segment's dead bits, the terms assigned
// since (the dictionary's second table), the pages of document frequencies
// written since (dfColumn). Merge gathers one term's postings at a time, so
// that what it holds besides its sources is the new segment.
//
// Every path adds a document's term scores in query term order (SumInOrder),
// so a document gets the same score to the last bit whichever path found it;
// the tests force each path and compare it with scoring every posting.
package bm25
