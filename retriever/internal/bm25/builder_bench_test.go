package bm25

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkBuilderFinish lays out a batch of 200,000 documents of
// Zipf-distributed words (some 3 million postings), in runs of 100 of 7
// partitions: the log's sort by term and the segment's layout, then the
// batch counted in the statistics (Stats.Add, which the owner does under
// its lock), each timed apart; every other batch is sorted in one pass
// instead of finishPasses, and each kind's median reported.
func BenchmarkBuilderFinish(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	words := randomTerms(r, 300000)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	docs := make([]string, 200000)
	for i := range docs {
		var sb strings.Builder
		for range 5 + r.IntN(25) {
			sb.WriteString(words[zipf.Uint64()])
			sb.WriteByte(' ')
		}
		docs[i] = sb.String()
	}
	dc := NewDict()
	var st Stats
	var next *Builder
	var add time.Duration
	took := [2][]time.Duration{}
	i := 0
	for b.Loop() {
		b.StopTimer()
		bl := NewBuilder(DefaultLayerMin)
		if next != nil {
			bl = next
		}
		for i, d := range docs {
			if bl.Count([]byte(d)) > 0 {
				bl.Add(uint64(i), uint32(i/100), uint32(i/100%7))
			}
		}
		global := dc.Assign(bl.Terms())
		// Every other batch sorted in one pass, to compare.
		if i%2 == 1 {
			bl.passLimit = 1 << 30
		}
		b.StartTimer()
		start := time.Now()
		bl.Finish(global)
		took[i%2] = append(took[i%2], time.Since(start))
		i++
		b.StopTimer()
		start = time.Now()
		st.Add(bl, global)
		add += time.Since(start)
		b.StartTimer()
		next = bl.Next(0)
	}
	b.ReportMetric(float64(add.Microseconds())/float64(b.N), "µs-stats-add")
	for k, name := range []string{"passes", "one-pass"} {
		if len(took[k]) > 0 {
			slices.Sort(took[k])
			b.ReportMetric(float64(took[k][len(took[k])/2].Microseconds()), "µs-median-finish-"+name)
		}
	}
}
