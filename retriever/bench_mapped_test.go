package retriever

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"runls/internal/rungen"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/persist"
)

// BenchmarkQueryMappedSegments: the engine's segments of the benchmark run
// encoded into cache blobs (bm25/segment_codec.go), mapped read-only and
// decoded, against the same segments on the heap (issue 18: a query on a
// mapped segment as fast as today's). Each query runs over both in turn,
// (each first half of the time), so that both see the machine in one
// state, and the answers must be equal.
// Reports each side's median and p99, and what decoding every segment cost.
// Each query runs guarded against a fault on the mapping, as a request's
// answer does.
func BenchmarkQueryMappedSegments(b *testing.B) {
	ix, opts := indexedBenchRun(b)
	encodings := make([][]byte, len(ix.state.Postings))
	for i, s := range ix.state.Postings {
		encodings[i] = s.AppendEncoded(nil)
	}
	snap := mapBlobs(b, ix, encodings...)
	defer snap.Close()
	start := time.Now()
	mapped := make([]*bm25.Segment, len(encodings))
	for i, blob := range snap.Blobs() {
		var err error
		mapped[i], err = bm25.DecodeSegment(blob.Bytes())
		must(b, err)
	}
	decode := time.Since(start)
	heap := ix.state.Postings

	queries := rungen.Queries(opts, 50)
	use := func(segs []*bm25.Segment) {
		ix.mu.Lock()
		ix.state.Postings = segs
		ix.mu.Unlock()
	}
	defer use(heap)
	timed := func(req Request) ([]byte, time.Duration) {
		t := time.Now()
		// Guarded as a request's answer is (fault.go).
		res, err := persist.Call(ix.cache.Guard(), "answering", func() (Result, error) { return ix.searchIndexed(context.Background(), req) })
		d := time.Since(t)
		must(b, err)
		out, err := json.Marshal(res)
		must(b, err)
		return out, d
	}
	var onHeap, onMap []time.Duration
	i := 0
	for b.Loop() {
		req := Request{Query: queries[i%len(queries)], Episode: "episode-3", Conversation: "conv-1", TopK: 5}
		i++
		// Each goes first half of the time: the second runs on caches the
		// first warmed.
		var want, got []byte
		var dh, dm time.Duration
		if i%2 == 0 {
			use(heap)
			want, dh = timed(req)
			use(mapped)
			got, dm = timed(req)
		} else {
			use(mapped)
			got, dm = timed(req)
			use(heap)
			want, dh = timed(req)
		}
		if string(got) != string(want) {
			b.Fatalf("%q: mapped segments answer\n%s\nheap segments\n%s", req.Query, got, want)
		}
		onHeap, onMap = append(onHeap, dh), append(onMap, dm)
	}
	for name, lat := range map[string][]time.Duration{"heap": onHeap, "mapped": onMap} {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-median-"+name)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99-"+name)
	}
	b.ReportMetric(float64(decode.Microseconds()), "µs-decode-all")
	b.ReportMetric(float64(len(encodings)), "segments")
}
