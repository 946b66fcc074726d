package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkFailures: run/failures in the engine on a copy of the generated
// run (RUNLS_BENCH_SIZE; issue 27 states its targets at 1GB), the answer's
// JSON included (EncodedJSON: what the server writes):
//   - unchanged: asked again, nothing changed (the kept answer);
//   - answer: the kept answer dropped, made again from the kept tally
//     (what every change of the run costs besides what it adds);
//   - append: one ERROR record appended to one file, then asked (Refresh,
//     the appended record read, the answer made).
//
// first-ms is the first request (every candidate record read); entries
// counts the failures kept (of every group, not only the 200 answered).
func BenchmarkFailures(b *testing.B) {
	cached, _ := benchRun(b)
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
	start := time.Now()
	first, err := ix.Failures(ctx, FailuresRequest{})
	if err != nil {
		b.Fatal(err)
	}
	firstTook := time.Since(start)
	entries := 0
	files, _ := ix.failureFiles(failuresQuery{minLevel: memoFloor})
	for _, fs := range files {
		if fs.memo != nil {
			entries += len(fs.memo.failures.entries) + len(fs.memo.failures.lastFound)
		}
	}
	target := filepath.Join(dir, "episode-3", "alice", "alice.log")
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n := 0
	for _, mode := range []string{"unchanged", "answer", "append"} {
		b.Run(mode, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				switch mode {
				case "answer":
					ix.failAnswer.mu.Lock()
					ix.failAnswer.res = nil
					ix.failAnswer.mu.Unlock()
				case "append":
					n++
					line := fmt.Sprintf("2026-10-30 12:00:%02d.000 ERROR [running] [conv-1] Alice bench tool call %d failed\n", n%60, n)
					if _, err := f.WriteString(line); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				res, err := ix.Failures(ctx, FailuresRequest{})
				if err != nil {
					b.Fatal(err)
				}
				_ = res.EncodedJSON() // what the server writes
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(firstTook.Milliseconds()), "first-ms")
			b.ReportMetric(float64(entries), "entries")
			b.ReportMetric(float64(len(first.Groups)), "groups")
		})
	}
}
