package retriever

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"runls/internal/cputime"
	"runls/internal/store"
)

// BenchmarkStorm asks issue 33's slowest query, `rate limited retrying`
// (whose best pieces tie by the thousand: bench/serve's storm of templated
// warnings), on a run that bench/serve left with -keep: RUNLS_STORM_RUN is
// its copy, RUNLS_STORM_CACHE its cache folder (optional: without it the run
// is indexed first). Each iteration asks it through Search as a server does
// (the run watched),
// in episode-1/conv-1 (ranks twice) and without a context, at top 5 and top
// 10, in turn (RUNLS_STORM_ONLY=none-top10: that one alone; RUNLS_STORM_QUERY:
// another query); it reports each one's CPU time a search (the searching
// goroutines' share of the process: nothing else runs) and median wall time.
//
//	RUNLS_STORM_RUN=/tmp/x/copy-1 RUNLS_STORM_CACHE=/tmp/x/copy-1-cache \
//	  go test -run XXX -bench Storm -benchtime 200x ./retriever
func BenchmarkStorm(b *testing.B) {
	dir := os.Getenv("RUNLS_STORM_RUN")
	if dir == "" {
		b.Skip("RUNLS_STORM_RUN is not set: a run with bench/serve's storm (bench/serve -keep)")
	}
	opts := Options{Root: dir}
	if c := os.Getenv("RUNLS_STORM_CACHE"); c != "" {
		root, err := store.OpenRoot(c)
		if err != nil {
			b.Fatal(err)
		}
		opts.Cache.Root = root
	}
	ctx := context.Background()
	ix, err := Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	if _, err := ix.Refresh(ctx, nil); err != nil {
		b.Fatal(err)
	}
	defer watchBench(b, ix)() // as a server: a search waits for the events, not a scan
	query := "rate limited retrying"
	if q := os.Getenv("RUNLS_STORM_QUERY"); q != "" { // another query of the set, in the same four requests
		query = q
	}
	reqs := []struct {
		name string
		req  Request
	}{
		{"ctx-top5", Request{Query: query, Episode: "episode-1", Conversation: "conv-1", TopK: 5}},
		{"ctx-top10", Request{Query: query, Episode: "episode-1", Conversation: "conv-1", TopK: 10}},
		{"none-top5", Request{Query: query, TopK: 5}},
		{"none-top10", Request{Query: query, TopK: 10}},
	}
	if only := os.Getenv("RUNLS_STORM_ONLY"); only != "" { // one of them, for a profile
		reqs = slices.DeleteFunc(reqs, func(r struct {
			name string
			req  Request
		}) bool {
			return r.name != only
		})
	}
	cpu := make([]time.Duration, len(reqs))
	wall := make([][]time.Duration, len(reqs))
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i, r := range reqs {
			c0, t0 := cputime.Process(), time.Now()
			res, err := ix.Search(ctx, r.req)
			if err != nil {
				b.Fatal(err)
			}
			wall[i] = append(wall[i], time.Since(t0))
			cpu[i] += cputime.Process() - c0
			if len(res.Items) == 0 {
				b.Fatalf("%s: no items", r.name)
			}
		}
		n++
	}
	for i, r := range reqs {
		slices.Sort(wall[i])
		b.ReportMetric(float64(cpu[i].Microseconds())/float64(n), "cpu-µs-"+r.name)
		b.ReportMetric(float64(wall[i][len(wall[i])/2].Microseconds()), "µs-median-"+r.name)
	}
}
