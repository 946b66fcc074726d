package retriever

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"runls/internal/store"
)

// BenchmarkFirstIndexMemory indexes the benchmark run once an iteration,
// with the memory limit runls' commands set (Options.BoundMemory), and
// samples the process every 100 ms: the peaks of the Go heap in use, of
// the live heap (as of the last collection), of the live heap beside the
// segments (what stays on the heap once the segments are mapped as they
// are built) and of RssAnon, per byte of the run, and what the engine
// holds at the end (segments, dictionary, statistics).
// RUNLS_HEAPPROFILE=path writes a heap profile near the live peak (at most
// one a second while the peak grows). RUNLS_BENCH_FLUSH=1 indexes with a
// cache entry (in a temporary folder), whose segments are flushed as they
// are made (flush.go): the live heap is then what stays beside them.
// RUNLS_HEAPPROFILE_END=path writes one once indexed (after a collection);
// RUNLS_BENCH_TRACE=1 prints each sample (the live heap, the heap in use,
// RssAnon, in MiB) to stderr, which shows when the peak comes.
func BenchmarkFirstIndexMemory(b *testing.B) {
	dir, _ := benchRun(b)
	profile := os.Getenv("RUNLS_HEAPPROFILE")
	for b.Loop() {
		heapInUse()
		opts := Options{Root: dir, BoundMemory: true}
		if os.Getenv("RUNLS_BENCH_FLUSH") != "" {
			root, err := store.OpenRoot(b.TempDir())
			must(b, err)
			opts.Cache = CacheOptions{Root: root}
		}
		ix, err := Open(context.Background(), opts)
		must(b, err)
		done := make(chan struct{})
		var wg sync.WaitGroup
		var peakHeap, peakAnon, peakLive, peakBeside uint64
		wg.Add(1)
		go func() {
			defer wg.Done()
			var written uint64
			last := time.Time{}
			t0 := time.Now()
			live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peakHeap = max(peakHeap, m.HeapInuse)
				peakAnon = max(peakAnon, rssAnon())
				metrics.Read(live)
				l := live[0].Value.Uint64()
				peakLive = max(peakLive, l)
				fp := ix.Footprint()
				peakBeside = max(peakBeside, l-min(l, uint64(fp.Postings+fp.Terms+fp.Columns)))
				if os.Getenv("RUNLS_BENCH_TRACE") != "" {
					fmt.Fprintf(os.Stderr, "trace %s live %d inuse %d anon %d\n", time.Since(t0).Round(time.Millisecond), l>>20, m.HeapInuse>>20, rssAnon()>>20)
				}
				if profile != "" && l > written*21/20 && time.Since(last) > time.Second {
					if f, err := os.Create(profile); err == nil {
						pprof.WriteHeapProfile(f)
						f.Close()
						written, last = l, time.Now()
					}
				}
			}
		}()
		_, err = ix.Refresh(context.Background(), nil)
		close(done)
		wg.Wait()
		must(b, err)
		if p := os.Getenv("RUNLS_HEAPPROFILE_END"); p != "" {
			runtime.GC()
			if f, err := os.Create(p); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		content, _ := ix.BytesRead()
		fp := ix.Footprint()
		run := float64(content)
		b.ReportMetric(float64(peakHeap)/run, "peak-heap/byte")
		b.ReportMetric(float64(peakAnon)/run, "peak-anon/byte")
		b.ReportMetric(float64(peakLive)/run, "peak-live/byte")
		b.ReportMetric(float64(peakBeside)/run, "peak-beside-segments/byte")
		b.ReportMetric(float64(heapInUse())/run, "end-heap/byte")
		b.ReportMetric(float64(fp.Postings+fp.Terms+fp.Columns)/run, "segments/byte")
		dict, _ := ix.state.Dict.Footprint()
		b.ReportMetric(float64(dict)/run, "dict/byte")
		b.ReportMetric(float64(fp.Stats)/run, "stats/byte")
		b.ReportMetric(float64(fp.Dict), "terms")
		ix.Close()
	}
}

// rssAnon returns the process's RssAnon in bytes (0 where /proc has none).
func rssAnon() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := bytes.Fields(sc.Bytes()); len(f) >= 2 && string(f[0]) == "RssAnon:" {
			kb, _ := strconv.ParseUint(string(f[1]), 10, 64)
			return kb << 10
		}
	}
	return 0
}
