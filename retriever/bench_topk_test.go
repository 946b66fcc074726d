package retriever

import (
	"context"
	"slices"
	"testing"
	"time"

	"runls/internal/rungen"
)

// BenchmarkTopK runs the generator's query set (50 queries) on the shared
// generated run (RUNLS_BENCH_SIZE=1GB for the figure) at topK 5 and
// topK 1000, interleaved on the same built index so that both see the same
// machine, and reports each one's median and p99 and the ratios of topK 1000
// to topK 5. One iteration is one query at both sizes, in alternating order.
// bench/topk.sh runs it and holds topK 1000 to its bound. The request has the
// shape an editor sends (episode and conversation: record files are evidence).
func BenchmarkTopK(b *testing.B) {
	ix, opts := indexedBenchRun(b)
	queries := rungen.Queries(opts, 50)
	ks := [2]int{5, MaxTopK}
	var lat [2][]time.Duration
	items := 0
	b.ResetTimer()
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		for j := range 2 {
			k := (i + j) % 2 // topK 5 first on even iterations, topK 1000 first on odd ones
			req := Request{Query: q, Episode: "episode-3", Conversation: "conv-1", TopK: ks[k]}
			start := time.Now()
			res, err := ix.searchIndexed(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			lat[k] = append(lat[k], time.Since(start))
			if k == 1 {
				items += len(res.Items)
			}
		}
		i++
	}
	if items == 0 {
		b.Fatal("topK 1000 found nothing")
	}
	var med, p99 [2]float64
	for k := range 2 {
		slices.Sort(lat[k])
		med[k] = float64(lat[k][len(lat[k])/2].Microseconds())
		p99[k] = float64(lat[k][len(lat[k])*99/100].Microseconds())
	}
	b.ReportMetric(med[0], "µs-median-top5")
	b.ReportMetric(p99[0], "µs-p99-top5")
	b.ReportMetric(med[1], "µs-median-top1000")
	b.ReportMetric(p99[1], "µs-p99-top1000")
	b.ReportMetric(med[1]/max(med[0], 1), "x-median")
	b.ReportMetric(p99[1]/max(p99[0], 1), "x-p99")
	b.ReportMetric(float64(items)/float64(i), "items/top1000")
}
