package retriever

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"runls/internal/cputime"
	"runls/internal/rungen"
)

// BenchmarkIndexJSONLines indexes a generated run of JSON-lines transcripts
// (issue 31: at least half the speed of the run's own layout, BenchmarkIndex
// at the same size): RUNLS_BENCH_JSONL_SIZE bytes (default 20MB; 200MB for
// the figure), kept under RUNLS_BENCH_CACHE like the other runs.
func BenchmarkIndexJSONLines(b *testing.B) {
	dir := jsonlBenchRun(b)
	b.ResetTimer()
	for b.Loop() {
		ix, err := Open(context.Background(), Options{Root: dir})
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cputime.Process()
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		elapsed, cpu := time.Since(start), cputime.Process()-cpu0
		content, _ := ix.BytesRead()
		b.SetBytes(content)
		b.ReportMetric(float64(content)/elapsed.Seconds()/1e6, "MB/s-index")
		b.ReportMetric(float64(content)/(cpu.Seconds()/2)/1e6, "MB/s-2cores-cpu")
		runtime.KeepAlive(ix)
		ix.Close()
	}
}

// jsonlBenchRun returns a run of JSON-lines files: transcripts shaped like
// a Claude Code session (.jsonl, plain files) and zap logs (.log, foreign
// JSON-lines record files), 8 agents in 4 episodes, written once.
func jsonlBenchRun(b *testing.B) string {
	b.Helper()
	size := int64(20 << 20)
	if s := os.Getenv("RUNLS_BENCH_JSONL_SIZE"); s != "" {
		n, err := rungen.ParseSize(s)
		if err != nil {
			b.Fatal(err)
		}
		size = n
	}
	cache := os.Getenv("RUNLS_BENCH_CACHE")
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "runls-bench")
	}
	dir := filepath.Join(cache, "jsonl-"+strconv.FormatInt(size, 10))
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := writeJSONLRun(dir, size); err != nil {
		b.Fatal(err)
	}
	return dir
}

func writeJSONLRun(dir string, size int64) error {
	rng := rand.New(rand.NewPCG(31, 1))
	vocab := make([]string, 20000)
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "zen", "pra", "qui", "dor", "fel", "gan", "hib"}
	for i := range vocab {
		var w strings.Builder
		for range 2 + i%3 {
			w.WriteString(syll[rng.IntN(len(syll))])
		}
		vocab[i] = w.String()
	}
	sentence := func(words int) string {
		var s strings.Builder
		for i := range words {
			if i > 0 {
				s.WriteByte(' ')
			}
			// Zipf-like: small indexes far more often.
			s.WriteString(vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64()*rng.Float64())])
		}
		return s.String()
	}
	const files = 32
	per := size / files
	for f := range files {
		ep, agent := f%4+1, f%8
		ext := ".jsonl"
		if f%4 == 3 {
			ext = ".log"
		}
		path := filepath.Join(dir, fmt.Sprintf("episode-%d", ep), fmt.Sprintf("agent%d", agent), fmt.Sprintf("session-%d%s", f, ext))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(out, 1<<20)
		var n int64
		for i := 0; n < per; i++ {
			ts := fmt.Sprintf("2026-03-02T%02d:%02d:%02d.%03dZ", i/3600%24, i/60%60, i%60, i%1000)
			var line string
			switch {
			case ext == ".log":
				line = fmt.Sprintf(`{"level":"info","ts":%d.%03d,"caller":"agent/loop.go:%d","msg":%q,"turn":%d}`, 1772445600+i, i%1000, i%400, sentence(8+rng.IntN(20)), i)
			case i%2 == 0:
				line = fmt.Sprintf(`{"parentUuid":"u%d","type":"user","message":{"role":"user","content":%q},"uuid":"u%d","timestamp":%q}`, i-1, sentence(10+rng.IntN(60)), i, ts)
			default:
				line = fmt.Sprintf(`{"parentUuid":"u%d","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"go test ./..."}}]},"uuid":"u%d","timestamp":%q}`, i-1, sentence(20+rng.IntN(150))+"\n"+sentence(10), i, i, ts)
			}
			k, err := w.WriteString(line + "\n")
			if err != nil {
				return err
			}
			n += int64(k)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
}
