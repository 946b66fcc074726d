package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"runls/internal/rungen"
	"runls/retriever"
)

// BenchmarkServeRecords: run/records' first page of 1,000 records from the
// built binary, `runls serve --stdio`, as an editor sends it: a framed
// request written to its stdin, the time until the whole framed answer is
// read from its stdout (decoding the JSON is the editor's part). The run is
// rungen.BenchRun's (RUNLS_BENCH_SIZE; the target, under 20 ms, is stated for
// 1GB); the shapes are those of the lsp package's BenchmarkRunRecords.
func BenchmarkServeRecords(b *testing.B) {
	ctx := context.Background()
	dir, _, err := rungen.BenchRun(ctx)
	if err != nil {
		b.Fatal(err)
	}
	bin := buildBinary(b)
	cmd := exec.Command(bin, "serve", "--stdio", "--log-level", "error")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	in := textproto.NewReader(bufio.NewReaderSize(stdout, 1<<20))
	id := 0
	send := func(msg map[string]any) {
		body, err := json.Marshal(msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			b.Fatal(err)
		}
	}
	// call returns the time to the whole answer and its size; the server's
	// own messages (logMessage, progress) are skipped.
	call := func(method string, params any) (time.Duration, int) {
		id++
		start := time.Now()
		send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		for {
			head, err := in.ReadMIMEHeader()
			if err != nil {
				b.Fatal(err)
			}
			n, err := strconv.Atoi(head.Get("Content-Length"))
			if err != nil {
				b.Fatal(err)
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(in.R, body); err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(string(body[:min(n, 64)]), `"method"`) {
				if strings.Contains(string(body[:min(n, 200)]), `"error"`) {
					b.Fatalf("%s: %s", method, body)
				}
				return time.Since(start), n
			}
		}
	}
	defer func() {
		call("shutdown", nil)
		send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
		if err := cmd.Wait(); err != nil {
			b.Errorf("runls serve: %v", err)
		}
	}()
	call("initialize", map[string]any{"processId": nil, "rootUri": retriever.FileURI(dir), "capabilities": map[string]any{}})
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	for _, c := range []struct {
		name   string
		params map[string]any
	}{
		{"conversation", map[string]any{"episode": "episode-3", "conversation": "conv-1"}},
		{"agent", map[string]any{"episode": "episode-3", "conversation": "conv-1", "agent": "carol"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			call("run/records", c.params) // waits for the indexing
			var took []time.Duration
			size := 0
			for b.Loop() {
				d, n := call("run/records", c.params)
				took, size = append(took, d), n
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-p99")
			b.ReportMetric(float64(size), "bytes-answer")
		})
	}
}
