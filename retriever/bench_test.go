package retriever

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"runls/internal/cputime"
	"runls/internal/rungen"
)

// indexedBenchRun opens and indexes the shared generated run.
func indexedBenchRun(b *testing.B) (*Index, rungen.Options) {
	b.Helper()
	dir, opts := benchRun(b)
	ix, err := Open(context.Background(), Options{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	return ix, opts
}

// benchRun returns the shared generated run (rungen.BenchRun).
func benchRun(b *testing.B) (string, rungen.Options) {
	b.Helper()
	dir, opts, err := rungen.BenchRun(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return dir, opts
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIndex indexes a whole run: MB/s, and the heap the index keeps per
// input byte (target at 1GB: at most 0.5).
func BenchmarkIndex(b *testing.B) {
	dir, _ := benchRun(b)
	b.ResetTimer()
	for b.Loop() {
		before := heapInUse()
		ix, err := Open(context.Background(), Options{Root: dir})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cputime.Process()
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		elapsed, cpu := time.Since(start), cputime.Process()-cpu0
		content, _ := ix.BytesRead()
		b.SetBytes(content)
		after := heapInUse()
		b.ReportMetric(float64(after-before)/float64(content), "heap/byte")
		// The record tables' part of it (internal/records), per input byte and per record.
		fp := ix.Footprint()
		b.ReportMetric(float64(fp.Records)/float64(content), "records-B/byte")
		b.ReportMetric(float64(fp.Records)/float64(max(fp.NRecords, 1)), "records-B/record")
		b.ReportMetric(float64(content)/elapsed.Seconds()/1e6, "MB/s-index")
		// What two idle cores would give: the CPU time spread over both.
		b.ReportMetric(float64(content)/(cpu.Seconds()/2)/1e6, "MB/s-2cores-cpu")
		runtime.KeepAlive(ix)
		ix.Close()
	}
}

// BenchmarkQuery runs the generator's query set on a built index, with the
// request shape an editor sends (episode and conversation, so record files are
// evidence): median and p99 latency of the query alone.
func BenchmarkQuery(b *testing.B) { benchQuery(b, false) }

// BenchmarkSearch is BenchmarkQuery through Search, which first brings the
// index up to date (a walk and a stat per file when no watcher runs).
func BenchmarkSearch(b *testing.B) { benchQuery(b, true) }

func benchQuery(b *testing.B, refresh bool) {
	ix, opts := indexedBenchRun(b)
	queries := rungen.Queries(opts, 50)
	var lat []time.Duration
	perQuery := map[string][]time.Duration{}
	if path := os.Getenv("RUNLS_QUERY_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	b.ResetTimer()
	cpu0 := cputime.Process()
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		i++
		req := Request{Query: q, Episode: "episode-3", Conversation: "conv-1", TopK: 5}
		start := time.Now()
		var err error
		if refresh {
			_, err = ix.Search(context.Background(), req)
		} else {
			_, err = ix.searchIndexed(context.Background(), req)
		}
		if err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		lat = append(lat, el)
		perQuery[q] = append(perQuery[q], el)
	}
	cpu := cputime.Process() - cpu0
	// Each query's median: the queries that are slow, not the moments.
	med := map[string]time.Duration{}
	for q, ls := range perQuery {
		slices.Sort(ls)
		med[q] = ls[len(ls)/2]
	}
	keys := slices.SortedFunc(maps.Keys(med), func(a, b string) int { return int(med[b] - med[a]) })
	if os.Getenv("RUNLS_BENCH_VERBOSE") != "" {
		for _, k := range keys {
			fmt.Fprintf(os.Stderr, "median %v %q\n", med[k], k)
		}
	}
	slices.Sort(lat)
	median, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	if path := os.Getenv("RUNLS_BENCH_TSV"); path != "" {
		// For bench/ratio.sh: the run, the figures, each query's median.
		dir, _ := benchRun(b)
		out := fmt.Sprintf("run\t%s\nall\t%d\t%d\n", dir, median.Microseconds(), p99.Microseconds())
		for _, k := range keys {
			out += fmt.Sprintf("query\t%s\t%d\n", k, med[k].Microseconds())
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/op")
	b.ReportMetric(float64(median.Microseconds()), "µs-median")
	b.ReportMetric(float64(p99.Microseconds()), "µs-p99")
}

// BenchmarkOneQuery runs the query in RUNLS_QUERY (default "deploy database
// migration") alone on a built index: to study one slow query.
func BenchmarkOneQuery(b *testing.B) {
	ix, _ := indexedBenchRun(b)
	query := os.Getenv("RUNLS_QUERY")
	if query == "" {
		query = "deploy database migration"
	}
	req := Request{Query: query, Episode: "episode-3", Conversation: "conv-1", TopK: 5}
	b.ResetTimer()
	cpu0 := cputime.Process()
	for b.Loop() {
		if _, err := ix.searchIndexed(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
