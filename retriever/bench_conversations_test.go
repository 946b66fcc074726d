package retriever

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkConversations: the summaries of episode-3's conversations on the
// generated run (RUNLS_BENCH_SIZE), as run/info with an episode asks for them
// for the editors' Show Conversation picks: one pass over the episode's record
// tables and, per conversation, a page of its first summaryScan records.
func BenchmarkConversations(b *testing.B) {
	ix, _ := indexedBenchRun(b)
	ctx := context.Background()
	var took []time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		list, err := ix.Conversations(ctx, "episode-3")
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		n = len(list)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(n), "conversations")
}
