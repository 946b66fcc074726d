package retriever

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"

	"runls/internal/store"
)

// BenchmarkReopenMemory writes the benchmark run's cache entry once (in
// RUNLS_BENCH_ENTRY, else a temporary folder), then reopens it an iteration:
// the heap the reopened index keeps (live, after two collections) and
// RssAnon, per byte of the run (issue 33: at 100,000 files the per-file
// state dominates). RUNLS_HEAPPROFILE=path writes a heap profile of the
// last reopened index.
func BenchmarkReopenMemory(b *testing.B) {
	dir, _ := benchRun(b)
	entry := os.Getenv("RUNLS_BENCH_ENTRY")
	if entry == "" {
		entry = b.TempDir()
	}
	open := func() *Index {
		root, err := store.OpenRoot(entry)
		must(b, err)
		ix, err := Open(context.Background(), Options{Root: dir, BoundMemory: true, Cache: CacheOptions{Root: root}})
		must(b, err)
		_, err = ix.Refresh(context.Background(), nil)
		must(b, err)
		return ix
	}
	must(b, open().Close())
	var run float64
	for b.Loop() {
		before := heapInUse()
		ix := open()
		content := ix.runBytesIndexed()
		run = float64(content)
		b.ReportMetric(float64(heapInUse()-min(before, heapInUse()))/run, "heap/byte")
		b.ReportMetric(float64(rssAnon())/run, "anon/byte")
		if p := os.Getenv("RUNLS_HEAPPROFILE"); p != "" {
			if f, err := os.Create(p); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		must(b, ix.Close())
	}
}

// runBytesIndexed is the bytes of the run's indexed files.
func (ix *Index) runBytesIndexed() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var n int64
	for _, fs := range ix.state.Files {
		if fs.Indexed() {
			n += fs.ReadPos
		}
	}
	return n
}
