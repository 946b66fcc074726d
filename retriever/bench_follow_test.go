package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runls/internal/rungen"
)

// BenchmarkSearchAfterAppend compares, on a generated run of RUNLS_BENCH_SIZE
// (default 20MB; the target of issue 3 is at 1GB), a search after 1 KiB was
// appended to one record file with a search after nothing was: the target is
// a ratio of at most 2. The two are interleaved, with the same query, so the
// ratio compares like with like on a noisy machine. Segments made by the
// appends accumulate as they would in a long session.
//
//	walk:    no watcher: each search walks the run folder (a stat of each
//	         folder and file, a listing of the folders that changed)
//	watched: a running watcher: each search waits for its barrier and looks at
//	         what the events named (the file appended to)
func BenchmarkSearchAfterAppend(b *testing.B) {
	for _, mode := range []string{"walk", "watched"} {
		b.Run(mode, func(b *testing.B) { benchAppend(b, mode == "watched") })
	}
}

func benchAppend(b *testing.B, watched bool) {
	cached, opts := benchRun(b)
	const target = "episode-3/alice/alice.log"
	dir := copyRun(b, cached)
	ix, err := Open(context.Background(), Options{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if _, err := ix.Refresh(ctx, nil); err != nil {
		b.Fatal(err)
	}
	if watched {
		defer watchBench(b, ix)()
	}
	queries := rungen.Queries(opts, 50)
	block := appendBlock(1 << 10)
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(target)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()

	var idle, appended time.Duration
	content0, checks0 := ix.BytesRead()
	heap0 := heapInUse()
	n := 0
	b.ResetTimer()
	for b.Loop() {
		req := Request{Query: queries[n%len(queries)], Episode: "episode-3", Conversation: "conv-1", TopK: 5}
		n++
		start := time.Now()
		if _, err := ix.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
		idle += time.Since(start)

		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if _, err := ix.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
		appended += time.Since(start)
	}
	b.StopTimer()
	heap := heapInUse()
	content, checks := ix.BytesRead()
	if want := int64(n * len(block)); content-content0 != want {
		b.Fatalf("read %d content bytes for %d appends of %d bytes, want %d", content-content0, n, len(block), want)
	}
	b.ReportMetric(float64(idle.Nanoseconds())/float64(n), "ns/search-idle")
	b.ReportMetric(float64(appended.Nanoseconds())/float64(n), "ns/search-appended")
	b.ReportMetric(float64(appended)/float64(idle), "ratio")
	b.ReportMetric(float64(checks-checks0)/float64(n), "check-bytes/op")
	// What each update keeps (its segment, and the pieces it retracted,
	// which stay as dead docs): segments are never merged yet.
	b.ReportMetric((float64(heap)-float64(heap0))/float64(n), "heap-B/append")
	ix.mu.RLock()
	b.ReportMetric(float64(len(ix.state.Segments)), "segments")
	ix.mu.RUnlock()
}

// copyRun copies cached beside it (rungen.Copy), removed when b ends.
func copyRun(b *testing.B, cached string) string {
	b.Helper()
	dir, err := rungen.Copy(cached, filepath.Dir(cached))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// appendBlock returns n bytes of fielded log records, whole lines.
func appendBlock(n int) []byte {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		line := fmt.Sprintf("2026-10-22 09:00:%02d.000 INFO  [running] [conv-1] Alice appended record %d about the deploy database migration", i%60, i)
		if rest := n - sb.Len() - 1; len(line) > rest || rest-len(line) < 80 {
			line = (line + strings.Repeat(" padding", n/8))[:rest]
		}
		sb.WriteString(line)
		sb.WriteByte('\n')
	}
	return []byte(sb.String())
}

// watchBench starts a Watch of an indexed ix and waits until it watches every
// folder the index knows; the returned function stops it.
func watchBench(b *testing.B, ix *Index) (stop func()) {
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Watch(wctx, nil) }()
	n, _, _, _ := ix.fw.Counts()
	waitWatched(b, ix, n)
	return func() { cancel(); <-done }
}
