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
