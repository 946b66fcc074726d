package masking_test

import (
	"context"
	"testing"
	"time"

	"runls/internal/cputime"
	"runls/internal/rungen"
	"runls/masking"
	"runls/retriever"
)

// BenchmarkIndexMasking indexes the shared generated run (rungen.BenchRun;
// RUNLS_BENCH_SIZE=1GB for the figure of record) with masking off and on, in
// turn within each iteration, as `runls` does it (masking.HidingOutside), and
// reports each one's throughput and their ratio: masking on must keep at least
// 0.7 of the throughput off (issue 15). The two are measured side by side
// because the machines are shared: compare the ratio, not the MB/s of two runs.
//
//	RUNLS_BENCH_SIZE=1GB go test -run '^$' -bench IndexMasking -benchtime 3x ./masking
func BenchmarkIndexMasking(b *testing.B) {
	dir, _, err := rungen.BenchRun(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var wall, cpu [2]time.Duration
	var bytes int64
	for b.Loop() {
		for mode := range 2 {
			opts := retriever.Options{Root: dir}
			if mode == 1 {
				opts.Masker = masking.HidingOutside(dir)
			}
			ix, err := retriever.Open(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			start, cpu0 := time.Now(), cputime.Process()
			if _, err := ix.Refresh(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			wall[mode] += time.Since(start)
			cpu[mode] += cputime.Process() - cpu0
			content, _ := ix.BytesRead()
			bytes = content
			ix.Close()
		}
	}
	n := float64(b.N)
	mbps := func(d time.Duration) float64 { return float64(bytes) * n / d.Seconds() / 1e6 }
	b.SetBytes(bytes * 2)
	b.ReportMetric(mbps(wall[0]), "MB/s-off")
	b.ReportMetric(mbps(wall[1]), "MB/s-on")
	b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "on/off")
	if cpu[0] > 0 { // 0 where the system does not say
		b.ReportMetric(cpu[1].Seconds()/cpu[0].Seconds(), "cpu-on/off")
	}
}
