package retriever

// This file holds the builder of one batch: the engine's builder beside the
// pieces' own columns.

import "runls/retriever/internal/bm25"

// builder collects the pieces of one batch: their terms and keys in the
// engine's builder, their own columns beside, by the same doc ids.
type builder struct {
	*bm25.Builder
	cols       rawColumns
	inputBytes int64 // bytes read into the batch
}

func newBuilder(layerMin int) *builder {
	return &builder{Builder: bm25.NewBuilder(layerMin)}
}

// A worker reads about batchBytes into one batch (a segment), the run's
// share of it: the builders' buffers are the heap's largest part of a first
// indexing once the segments are flushed as they are made (flush.go), some
// 1.8 bytes a byte of input (the postings log at 8 bytes a posting and 0.18
// postings a byte, its sort's buffer, the pieces' columns), for each
// worker. A run's 1/maxBatchShare keeps them near a tenth of the run over
// two workers (0.1x at 1 GB: 2 x 28 MB x 1.8); never more than
// maxBatchBytes, past which a segment is no cheaper to search or merge, nor
// less than minBatchBytes: on the generated 100,000 files of 200 MB, 5.6 MB
// batches (a 36th) took 2.0x the CPU of 32 MB ones under a tight memory
// limit (more segments laid out, flushed and merged, and more
// collections), and 16 MB ones 1.08x under memory.go's, for a peak RssAnon
// of 2.38x the run against 2.82x (bench/reopen.sh, one run each, load 8-9).
const (
	maxBatchBytes = 32 << 20
	minBatchBytes = 16 << 20
	maxBatchShare = 36
)

// onePass reports whether batches of batchBytes are sorted in one pass
// (bm25.Builder.SetOnePass): the smallest batches, those of runs under
// some 600 MB. There a sort buffer the size of the log (some 20 MB a
// worker at most) cut the CPU of indexing the 100,000-file run through
// runls serve by 4.5% (eight runs each, with the impact table of tf 1),
// for some 45 MB more peak memory. A larger run's batches keep the
// quarter-log buffer: there the builders' buffers are most of the heap
// (issue 18).
func onePass(batchBytes int64) bool { return batchBytes <= minBatchBytes }

// batchBytesFor is the bytes a worker reads into one batch of an update
// that reads total bytes.
func batchBytesFor(total, batchInput int64) int64 {
	if batchInput > 0 {
		return batchInput
	}
	return min(max(total/maxBatchShare, minBatchBytes), maxBatchBytes)
}

// newBatchBuilder returns the index's builder for a worker's batches: a
// test may lower the batch's document limit (Index.batchDocs).
func (ix *Index) newBatchBuilder() *builder {
	b := newBuilder(ix.searcher.Tuning.LayerMin)
	if ix.batchDocs > 0 {
		b.SetMaxDocs(ix.batchDocs)
	}
	return b
}

// next returns a builder for the worker's next batch, which takes over this
// one's buffers (see bm25.Builder.Next). This builder must be finished.
func (b *builder) next() *builder {
	return &builder{Builder: b.Builder.Next()}
}

// addDoc adds a piece whose terms Count counted; it returns its doc id, or
// false when the batch is full (bm25.Builder.Add).
func (b *builder) addDoc(d docColumns, agent uint32) (uint32, bool) {
	doc, ok := b.Add(d.hash, d.file, agent)
	if ok {
		b.cols.add(d)
	}
	return doc, ok
}

// reserve makes room for what n more input bytes will likely add.
func (b *builder) reserve(n int64) {
	b.cols.reserve(b.Reserve(n))
}

// finish lays the batch out as a segment with global term ids.
func (b *builder) finish(global []uint32) *segment {
	s := &segment{Segment: b.Finish(global)}
	s.narrow(&b.cols)
	return s
}
