package retriever

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"runls/internal/cputime"
	"runls/internal/rungen"
	"runls/internal/store"
)

// BenchmarkQuerySet asks the generator's query set (bench/serve's: 50
// queries) of a watched index, as `runls serve` does with the editor's
// context (episode-2, conv-1) and without, at top 5 and top 10, and
// reports the set's median in µs (issue 33's row: the set's median over the
// protocol's round trip) and the CPU time a search. RUNLS_SET_RUN names a
// run (bench/serve's working copy of the 1 GB run) and RUNLS_SET_CACHE the
// cache folder its entry is in, so that it is reopened, not indexed; without
// them it indexes the shared bench run (rungen.BenchRun). RUNLS_SET_MATCH
// keeps the queries it matches, RUNLS_SET_NOCONTEXT adds each without the
// context, RUNLS_SET_VERBOSE prints each request's median, RUNLS_SET_TWICE
// asks each request twice in a row (the second, whose data the first left in
// the caches, is at the odd places of the verbose list). RUNLS_SET_THRASH=N
// writes over N MiB between two requests, outside the timing: the caches
// and TLB that another process's work leaves between two of a server's
// requests (searchab's pace, a request every ~1 ms). At 8 MiB the cheap
// queries (single rare words and rare pairs: the set's median) take 2.5-3x
// their warm time, as through the server: what they cost there is the
// memory they touch.
func BenchmarkQuerySet(b *testing.B) {
	ctx := context.Background()
	dir, opts := os.Getenv("RUNLS_SET_RUN"), rungen.Options{Bytes: 1 << 30, Seed: 1}.FewFiles()
	if dir == "" {
		dir, opts = benchRun(b)
	}
	o := Options{Root: dir}
	if c := os.Getenv("RUNLS_SET_CACHE"); c != "" {
		root, err := store.Locate(c, false, os.Getenv)
		if err != nil {
			b.Fatal(err)
		}
		o.Cache = CacheOptions{Root: root}
	}
	ix, err := Open(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Refresh(ctx, nil); err != nil {
		b.Fatal(err)
	}
	defer watchBench(b, ix)()
	for ix.fw.CurrentBarrier() == nil {
		time.Sleep(time.Millisecond)
	}
	var reqs []Request
	var match *regexp.Regexp
	if m := os.Getenv("RUNLS_SET_MATCH"); m != "" {
		match = regexp.MustCompile(m)
	}
	for _, q := range rungen.Queries(opts, 50) {
		if match != nil && !match.MatchString(q) {
			continue
		}
		for _, k := range []int{5, 10} {
			reqs = append(reqs, Request{Query: q, Episode: "episode-2", Conversation: "conv-1", TopK: k})
			if os.Getenv("RUNLS_SET_NOCONTEXT") != "" {
				reqs = append(reqs, Request{Query: q, TopK: k})
			}
		}
	}
	// RUNLS_SET_ANSWER: the answer alone (ranking and items, no barrier
	// nor update), whose instructions callgrind counts alike run after run.
	answerOnly := os.Getenv("RUNLS_SET_ANSWER") != ""
	// RUNLS_SET_ITEMS: the items alone, timed after the request's ranking
	// (untimed, after the thrash), which leaves what it read in the caches
	// as a search does: what a search's items cost (issue 33). Its timer
	// stops for nothing (ns/op counts the ranking and the thrash too): a
	// stop reads the memory statistics, a stop of the world between the
	// ranking and the items.
	itemsOnly := os.Getenv("RUNLS_SET_ITEMS") != ""
	if os.Getenv("RUNLS_SET_TWICE") != "" {
		// each request twice in a row: the second finds what the first
		// read in the caches (the share of a search that is cache misses)
		var twice []Request
		for _, r := range reqs {
			twice = append(twice, r, r)
		}
		reqs = twice
	}
	var lat []time.Duration
	byReq := make([][]time.Duration, len(reqs))
	i := 0
	quiet := ix.fw.quietAnswers.Load()
	cpu := cputime.Process()
	b.ResetTimer()
	var thrash []byte
	if mb, err := strconv.Atoi(os.Getenv("RUNLS_SET_THRASH")); err == nil && mb > 0 {
		thrash = make([]byte, mb<<20)
	}
	for b.Loop() {
		if thrash != nil && itemsOnly {
			for k := 0; k < len(thrash); k += 64 {
				thrash[k]++
			}
		} else if thrash != nil {
			b.StopTimer()
			for k := 0; k < len(thrash); k += 64 {
				thrash[k]++
			}
			b.StartTimer()
		}
		if itemsOnly {
			req := reqs[i%len(reqs)]
			hits, agents, _, _, err := ix.rankAnswer(ctx, req, req.rankingText(), newFilter(&ix.state, ix.interpreter, req))
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			ix.items(hits, agents)
			d := time.Since(start)
			lat = append(lat, d)
			byReq[i%len(reqs)] = append(byReq[i%len(reqs)], d)
			i++
			continue
		}
		start := time.Now()
		if answerOnly {
			if _, err := ix.searchIndexed(ctx, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
		} else if _, err := ix.Search(ctx, reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		lat = append(lat, d)
		byReq[i%len(reqs)] = append(byReq[i%len(reqs)], d)
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/float64(i), "µs-cpu/search")
	b.ReportMetric(float64(ix.fw.quietAnswers.Load()-quiet)/float64(i), "quiet/search") // answered with no barrier
	if os.Getenv("RUNLS_SET_VERBOSE") != "" {
		for j, r := range reqs {
			if ds := byReq[j]; len(ds) > 0 {
				slices.Sort(ds)
				fmt.Fprintf(os.Stderr, "%-40s top %2d context %-5v %6.0f µs\n", r.Query, r.TopK, r.Episode != "", float64(ds[len(ds)/2].Nanoseconds())/1e3)
			}
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "µs-median")
}
