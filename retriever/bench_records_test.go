package retriever

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkRecords: run/records' first page of 1,000 on the generated run
// (RUNLS_BENCH_SIZE; the target, under 20 ms, is stated for 1GB), in the
// engine (Index.Records, its Refresh included). Shapes:
//   - conversation: conv-1 of episode-3, every agent (at 1GB: 51,468
//     records in 8 files; rungen's conversations hold 40,000-55,000 records
//     an episode, none as few as 10,000);
//   - agent: conv-1 of episode-3, agent carol (10,378 records in 2 files:
//     the nearest shape to 10,000);
//   - later-page: the page after the first 20,000 records of conv-1, or
//     after its last full page on a smaller run (a cursor's binary search
//     into every file);
//   - sparse: minLevel ERROR of episode-3 (one record in ~60).
//
// ms-median and ms-p99 are per request; records-per-page checks the shape.
func BenchmarkRecords(b *testing.B) {
	ix, _ := indexedBenchRun(b)
	ctx := context.Background()
	conv := RecordsRequest{Episode: "episode-3", Conversation: "conv-1"}
	later := conv
	// A run smaller than 1GB may hold fewer than 20,000 records in conv-1: the
	// later page is then the conversation's last full page.
	for seen := 0; seen < 20000; {
		res, err := ix.Records(ctx, RecordsRequest{Episode: later.Episode, Conversation: later.Conversation, Limit: DefaultRecordsLimit, Cursor: later.Cursor})
		if err != nil {
			b.Fatalf("paging to 20,000: %v", err)
		}
		if res.Cursor == nil {
			if seen == 0 {
				b.Fatalf("conv-1 of episode-3 holds one page or less (%d records): no later page", len(res.Records))
			}
			break
		}
		seen += len(res.Records)
		later.Cursor = *res.Cursor
	}
	for _, c := range []struct {
		name string
		req  RecordsRequest
	}{
		{"conversation", conv},
		{"agent", RecordsRequest{Episode: "episode-3", Conversation: "conv-1", Agent: "carol"}},
		{"later-page", later},
		{"sparse", RecordsRequest{Episode: "episode-3", MinLevel: "ERROR"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			n := 0
			for b.Loop() {
				start := time.Now()
				res, err := ix.Records(ctx, c.req)
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				n = len(res.Records)
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-p99")
			b.ReportMetric(float64(n), "records-per-page")
		})
	}
}
