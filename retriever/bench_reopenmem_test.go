package retriever

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

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
	var opened, refreshed time.Duration
	open := func() *Index {
		root, err := store.OpenRoot(entry)
		must(b, err)
		start := time.Now()
		ix, err := Open(context.Background(), Options{Root: dir, BoundMemory: true, Cache: CacheOptions{Root: root}})
		must(b, err)
		opened += time.Since(start)
		start = time.Now()
		_, err = ix.Refresh(context.Background(), nil)
		must(b, err)
		refreshed += time.Since(start)
		return ix
	}
	must(b, open().Close())
	opened, refreshed = 0, 0
	var run float64
	for b.Loop() {
		before := heapInUse()
		ix := open()
		content := ix.runBytesIndexed()
		run = float64(content)
		b.ReportMetric(float64(heapInUse()-min(before, heapInUse()))/run, "heap/byte")
		b.ReportMetric(float64(rssAnon())/run, "anon/byte")
		time.Sleep(2 * time.Second) // as bench/reopen.sh reads it: the heap given back (indexedAll)
		b.ReportMetric(float64(rssAnon())/run, "settled-anon/byte")
		if p := os.Getenv("RUNLS_HEAPPROFILE"); p != "" {
			if f, err := os.Create(p); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		must(b, ix.Close())
	}
	b.ReportMetric(opened.Seconds()/float64(b.N), "open-s")
	b.ReportMetric(refreshed.Seconds()/float64(b.N), "refresh-s")
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
