package lsp_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/internal/rungen"
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
	dir, _, err := rungen.BenchRun(ctx)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := retriever.Open(ctx, retriever.Options{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Refresh(ctx, nil); err != nil {
		b.Fatal(err)
	}
	a, p := osPipes(b)
	done := make(chan error, 1)
	shared := sharedIndex{Index: ix}
	go func() {
		done <- lsp.Serve(ctx, a, lsp.Options{
			Logger: zap.NewNop(),
			Open:   func(context.Context, retriever.Options) (lsp.Engine, error) { return shared, nil },
		})
	}()
	call := framedCaller(b, p)
	defer func() {
		call(protocol.MethodShutdown, nil)
		fmt.Fprintf(p, "Content-Length: 33\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}")
		<-done
		p.Close()
	}()
	call(protocol.MethodInitialize, map[string]any{"processId": nil, "rootUri": retriever.FileURI(dir), "capabilities": map[string]any{}})
	body := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	fmt.Fprintf(p, "Content-Length: %d\r\n\r\n%s", len(body), body)
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
			for _, m := range []struct {
				name string
				d    []time.Duration
			}{{"server", server}, {"engine", engine}} {
				s := slices.Clone(m.d)
				slices.Sort(s)
				b.ReportMetric(float64(s[len(s)/2].Microseconds())/1000, "ms-median-"+m.name)
				b.ReportMetric(float64(s[len(s)*99/100].Microseconds())/1000, "ms-p99-"+m.name)
			}
			b.ReportMetric(float64(size), "bytes-answer")
			b.ReportMetric(float64(n), "records")
		})
	}
}
