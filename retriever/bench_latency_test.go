package retriever

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"runls/internal/rungen"
)

// BenchmarkRareWordParts breaks down a watched search for a single rare word
// (the generator's queries 1, 11, …, which bench/serve holds to 0.35 ms over
// the protocol's round trip) into its parts, interleaved search by search on
// one built index with a running watcher: the barrier's wait alone
// (awaitEvents), the update after it (nothing changed: no walk), the answer
// alone (searchIndexed: ranking, both rankings' filters, the evidence lines
// read from the files), and the whole Search, which runs the barrier and the
// answer side by side. Each is reported as its median in µs.
func BenchmarkRareWordParts(b *testing.B) {
	ix, opts := indexedBenchRun(b)
	ctx := context.Background()
	defer watchBench(b, ix)()
	for ix.fw.CurrentBarrier() == nil {
		time.Sleep(time.Millisecond)
	}
	var rare []string
	for i, q := range rungen.Queries(opts, 50) {
		if i%10 == 1 {
			rare = append(rare, q)
		}
	}
	parts := []struct {
		name string
		fn   func(Request) error
		lat  []time.Duration
	}{
		{name: "barrier", fn: func(Request) error { return ix.fw.awaitEvents(ctx, ix.log) }},
		{name: "update", fn: func(Request) error { _, err := ix.update(ctx, nil); return err }},
		{name: "answer", fn: func(r Request) error { _, err := ix.searchIndexed(ctx, r); return err }},
		{name: "search", fn: func(r Request) error { _, err := ix.Search(ctx, r); return err }},
	}
	i := 0
	b.ResetTimer()
	for b.Loop() {
		req := Request{Query: rare[i%len(rare)], Episode: "episode-2", Conversation: "conv-1", TopK: 5}
		i++
		for j := range parts {
			start := time.Now()
			if err := parts[j].fn(req); err != nil {
				b.Fatal(err)
			}
			parts[j].lat = append(parts[j].lat, time.Since(start))
		}
	}
	b.StopTimer()
	for _, p := range parts {
		slices.Sort(p.lat)
		b.ReportMetric(float64(p.lat[len(p.lat)/2].Nanoseconds())/1e3, fmt.Sprintf("µs-median-%s", p.name))
	}
}
