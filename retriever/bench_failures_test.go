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
//   - retally: the tally dropped too, made again from the files' kept
//     failures (what a file read again from its start or deleted costs);
//   - append: one ERROR record appended to one file, then asked (Refresh,
//     the appended record read, the answer made);
//   - warn-append: the same, asked with minLevel WARN (the WARN records are
//     kept apart, read once when first asked: warn-first-ms).
//
// first-ms is the first request (every candidate record read); entries
// counts the failures kept (of every group, not only the 200 answered);
// heap-MB is the heap they hold, with their tally and the answer kept, and
// heap-warn-MB the same once WARN was asked for too.
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
	defer watchBench(b, ix)() // as the server runs it: a request waits for the watcher's events, not a walk
	heap0 := heapInUse()
	start := time.Now()
	first, err := ix.Failures(ctx, FailuresRequest{})
	if err != nil {
		b.Fatal(err)
	}
	firstTook := time.Since(start)
	heap1 := heapInUse()
	entries := 0
	files, _ := ix.failureFiles(failuresQuery{minLevel: memoFloor})
	for _, fs := range files {
		if fs.Memo() != nil {
			entries += len(memoOf(fs).failures.entries) + len(memoOf(fs).failures.lastFound)
		}
	}
	target := filepath.Join(dir, "episode-3", "alice", "alice.log")
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n := 0
	start = time.Now()
	if _, err := ix.Failures(ctx, FailuresRequest{MinLevel: "WARN"}); err != nil {
		b.Fatal(err)
	}
	warnFirst := time.Since(start)
	heap2 := heapInUse()
	for _, mode := range []string{"unchanged", "answer", "retally", "append", "warn-append"} {
		b.Run(mode, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				switch mode {
				case "answer":
					ix.failAnswer.mu.Lock()
					ix.failAnswer.res = nil
					ix.failAnswer.mu.Unlock()
				case "retally":
					ix.failAnswer.mu.Lock()
					ix.failAnswer.res, ix.failAnswer.tallies = nil, nil
					ix.failAnswer.mu.Unlock()
				case "append", "warn-append":
					n++
					line := fmt.Sprintf("2026-10-30 12:00:%02d.000 ERROR [running] [conv-1] Alice bench tool call %d failed\n", n%60, n)
					if _, err := f.WriteString(line); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				req := FailuresRequest{}
				if mode == "warn-append" {
					req.MinLevel = "WARN"
				}
				res, err := ix.Failures(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				_ = res.EncodedJSON() // what the server writes
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(firstTook.Milliseconds()), "first-ms")
			b.ReportMetric(float64(warnFirst.Milliseconds()), "warn-first-ms")
			// What the memos and tallies hold: at ERROR, then with WARN too.
			b.ReportMetric(float64(int64(heap1)-int64(heap0))/(1<<20), "heap-MB")
			b.ReportMetric(float64(int64(heap2)-int64(heap0))/(1<<20), "heap-warn-MB")
			b.ReportMetric(float64(entries), "entries")
			b.ReportMetric(float64(len(first.Groups)), "groups")
		})
	}
}
