package lsp_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"runls/lsp"
	"runls/retriever"
)

// BenchmarkRunRecords: run/records' first page of 1,000 records through the
// server over OS pipes, as an editor frames it (request written to whole
// answer read), interleaved with Index.Records on the same index. The run is
// rungen.BenchRun's (RUNLS_BENCH_SIZE; the target, under 20 ms, is stated for
// 1GB). Shapes: conv-1 of episode-3 (at 1GB 51,468 records in 8 files: no
// conversation of the generated run holds as few as 10,000) and the same
// conversation of one agent, carol (10,378 records in 2 files).
func BenchmarkRunRecords(b *testing.B) {
	ctx := context.Background()
	ix, dir, _ := benchIndex(b)
	shared := sharedIndex{Index: ix}
	call := serveFramed(b, lsp.Options{
		Logger: zap.NewNop(),
		Open:   func(context.Context, retriever.Options) (lsp.Engine, error) { return shared, nil },
	}, dir, nil)
	for _, c := range []struct {
		name string
		req  retriever.RecordsRequest
	}{
		{"conversation", retriever.RecordsRequest{Episode: "episode-3", Conversation: "conv-1"}},
		{"agent", retriever.RecordsRequest{Episode: "episode-3", Conversation: "conv-1", Agent: "carol"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			call(lsp.MethodRunRecords, c.req) // waits for the indexing
			var server, engine []time.Duration
			size, n := 0, 0
			for b.Loop() {
				d, bytes := call(lsp.MethodRunRecords, c.req)
				server, size = append(server, d), bytes
				start := time.Now()
				res, err := ix.Records(ctx, c.req)
				if err != nil {
					b.Fatal(err)
				}
				engine, n = append(engine, time.Since(start)), len(res.Records)
			}
			reportLatencies(b, "server", server)
			reportLatencies(b, "engine", engine)
			b.ReportMetric(float64(size), "bytes-answer")
			b.ReportMetric(float64(n), "records")
		})
	}
}
