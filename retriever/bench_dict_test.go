package retriever

import (
	"runtime"
	"testing"
	"time"

	"runls/internal/store"
	"runls/retriever/internal/bm25"
)

// BenchmarkDictOfRun: the benchmark run's dictionary and statistics
// encoded into cache blobs, mapped read-only and decoded (issue 18:
// nothing rebuilt at open per term), against rebuilding the Go map the
// dictionary was from its terms. Reports the terms, the encodings' sizes,
// the decode time and the heap it leaves, the same for the map, and the
// heap the index's own (first indexing) dictionary and statistics hold.
func BenchmarkDictOfRun(b *testing.B) {
	ix, _ := indexedBenchRun(b)
	ix.mu.Lock()
	dict, stats := ix.state.Dict.AppendEncoded(nil), ix.state.Stats.AppendEncoded(nil)
	terms, heapStats := ix.state.Dict.Terms(), ix.state.Stats.Footprint()
	heapDict, _ := ix.state.Dict.Footprint()
	ix.mu.Unlock()
	snap := mapBlobs(b, ix, dict, stats)
	defer snap.Close()
	blobs := snap.Blobs()
	var decode time.Duration
	var decodedHeap int64
	for b.Loop() {
		before := heapInUse()
		start := time.Now()
		dc, err := bm25.DecodeDict(blobs[0].Bytes())
		must(b, err)
		st, err := bm25.DecodeStats(blobs[1].Bytes())
		must(b, err)
		decode = time.Since(start)
		decodedHeap = int64(heapInUse()) - int64(before)
		runtime.KeepAlive(dc)
		runtime.KeepAlive(st)
	}
	before := heapInUse()
	start := time.Now()
	ids := make(map[string]uint32, len(terms))
	for id, term := range terms {
		ids[term] = uint32(id)
	}
	rebuild := time.Since(start)
	terms = nil
	mapHeap := int64(heapInUse()) - int64(before) // the terms' strings counted too
	runtime.KeepAlive(ids)
	b.ReportMetric(float64(len(ids)), "terms")
	b.ReportMetric(float64(len(dict))/1e6, "MB-dict")
	b.ReportMetric(float64(len(stats))/1e6, "MB-stats")
	b.ReportMetric(float64(decode.Microseconds()), "µs-decode")
	b.ReportMetric(float64(decodedHeap)/1e6, "MB-heap-decoded")
	b.ReportMetric(float64(rebuild.Microseconds()), "µs-map-rebuild")
	b.ReportMetric(float64(mapHeap)/1e6, "MB-heap-map")
	b.ReportMetric(float64(heapDict)/1e6, "MB-heap-dict-built")
	b.ReportMetric(float64(heapStats)/1e6, "MB-heap-stats-built")
}

// mapBlobs writes each encoding as a blob of a cache entry of the index's
// run in a scratch folder and commits them; the snapshot maps them, in
// order (the test is skipped where nothing is mapped).
func mapBlobs(b *testing.B, ix *Index, encodings ...[]byte) *store.Snapshot {
	b.Helper()
	root, err := store.OpenRoot(b.TempDir())
	must(b, err)
	entry, err := root.Open(ix.Root(), []byte("bench"), store.Options{})
	must(b, err)
	b.Cleanup(func() { entry.Close() })
	var refs []store.BlobRef
	for _, enc := range encodings {
		w, err := entry.CreateBlob()
		must(b, err)
		_, err = w.Write(enc)
		must(b, err)
		ref, err := w.Commit()
		must(b, err)
		refs = append(refs, ref)
	}
	snap, err := entry.Commit(refs, nil)
	must(b, err)
	for _, blob := range snap.Blobs() {
		if !blob.Mapped() {
			snap.Close()
			b.Skip("no mmap on this system")
		}
	}
	return snap
}
