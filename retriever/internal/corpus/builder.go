package corpus

// This file holds the builder of one batch (a worker's, flushed and
// committed by the retriever's update): the engine's builder beside the
// pieces' own columns.

import "runls/retriever/internal/bm25"

// Builder collects the pieces of one batch: their terms and keys in the
// engine's builder, their own columns beside, by the same doc ids.
type Builder struct {
	*bm25.Builder
	Cols       RawColumns
	InputBytes int64 // bytes read into the batch
}

func NewBuilder(layerMin int) *Builder {
	return &Builder{Builder: bm25.NewBuilder(layerMin)}
}

// A worker reads about batchBytes into one batch (a segment), the run's
// share of it: the builders' buffers are the heap's largest part of a first
// indexing once the segments are flushed as they are made (flush.go), some
// 1.8 bytes a byte of input (the postings log at 8 bytes a posting and 0.18
// postings a byte, its sort's buffer, the pieces' columns), for each
// worker. A run's 1/MaxBatchShare keeps them near a tenth of the run over
// two workers (0.1x at 1 GB: 2 x 28 MB x 1.8); never more than
// MaxBatchBytes, past which a segment is no cheaper to search or merge, nor
// less than MinBatchBytes: on the generated 100,000 files of 200 MB, 5.6 MB
// batches (a 36th) took 2.0x the CPU of 32 MB ones under a tight memory
// limit (more segments laid out, flushed and merged, and more
// collections), and 16 MB ones 1.08x under memory.go's, for a peak RssAnon
// of 2.38x the run against 2.82x (bench/reopen.sh, one run each, load 8-9).
const (
	MaxBatchBytes = 32 << 20
	MinBatchBytes = 16 << 20
	MaxBatchShare = 36
)

// OnePass reports whether batches of batchBytes are sorted in one pass
// (bm25.Builder.SetOnePass): the smallest batches, those of runs under
// some 600 MB. There a sort buffer the size of the log (some 20 MB a
// worker at most) cut the CPU of indexing the 100,000-file run through
// runls serve by 4.5% (eight runs each, with the impact table of tf 1),
// for some 45 MB more peak memory. A larger run's batches keep the
// quarter-log buffer: there the builders' buffers are most of the heap
// (issue 18).
func OnePass(batchBytes int64) bool { return batchBytes <= MinBatchBytes }

// BatchBytesFor is the bytes a worker reads into one batch of an update
// that reads total bytes.
func BatchBytesFor(total, batchInput int64) int64 {
	if batchInput > 0 {
		return batchInput
	}
	return min(max(total/MaxBatchShare, MinBatchBytes), MaxBatchBytes)
}

// NextBatch returns a builder for the worker's next batch, which takes over this
// one's buffers (see bm25.Builder.Next). This builder must be finished and
// committed: its term table and columns are the next one's.
func (b *Builder) NextBatch() *Builder {
	return &Builder{Builder: b.Builder.Next(b.InputBytes)}
}

// AddPiece adds a piece whose terms Count counted; it returns its doc id, or
// false when the batch is full (bm25.Builder.Add).
func (b *Builder) AddPiece(d Piece, agent uint32) (uint32, bool) {
	doc, ok := b.Add(d.Hash, d.File, agent)
	if ok {
		b.Cols.Add(d)
	}
	return doc, ok
}

// ReserveInput makes room for what n more input bytes will likely add.
func (b *Builder) ReserveInput(n int64) {
	b.Cols.Reserve(b.Reserve(n))
}

// FinishSegment lays the batch out as a segment with global term ids.
func (b *Builder) FinishSegment(global []uint32) *Segment {
	s := &Segment{Segment: b.Finish(global)}
	s.Narrow(&b.Cols)
	return s
}
