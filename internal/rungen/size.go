package rungen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseSize reads "123", "100KB", "100MB", "1GB" (powers of 1024; "MiB" forms too).
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.Replace(t, "IB", "B", 1), "B")
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "G"):
		mult, t = 1<<30, strings.TrimSuffix(t, "G")
	}
	n, err := strconv.ParseFloat(t, 64)
	// !(x < max) also rejects NaN and infinities.
	if bytes := n * float64(mult); err != nil || !(bytes >= 1 && bytes < 1<<50) {
		return 0, fmt.Errorf("size %q: want a positive size below 1 PiB such as 100MB or 1GB", s)
	}
	return int64(n * float64(mult)), nil
}

// FewFiles returns o in the shape of a run of few, large files: 800 of them
// (10 episodes of 20 agents, each with a .history, a .log and 2 notes; the
// default shape has 4 agents: 160 files).
func (o Options) FewFiles() Options {
	o.Episodes, o.Agents, o.FilesPerAgent = 10, 20, 2
	return o
}

// ManyFiles returns o in the shape of a run of many small files: 100,000 of
// them (10 episodes of 100 agents, each with a .history, a .log and 98 notes).
func (o Options) ManyFiles() Options {
	o.Episodes, o.Agents, o.FilesPerAgent = 10, 100, 98
	return o
}

// BenchRun returns the generated run the benchmarks of runls share: of
// RUNLS_BENCH_SIZE (default 20MB; 100MB and 1GB for the figures of record),
// in the shape RUNLS_BENCH_SHAPE names ("few" or "many" files, see
// Options.FewFiles; default the default options), seed 1, cached under
// RUNLS_BENCH_CACHE (default the temp folder's runls-bench).
func BenchRun(ctx context.Context) (string, Options, error) {
	size := int64(20 << 20)
	if s := os.Getenv("RUNLS_BENCH_SIZE"); s != "" {
		n, err := ParseSize(s)
		if err != nil {
			return "", Options{}, fmt.Errorf("RUNLS_BENCH_SIZE: %w", err)
		}
		size = n
	}
	cache := os.Getenv("RUNLS_BENCH_CACHE")
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "runls-bench")
	}
	opts := Options{Bytes: size, Seed: 1}
	switch shape := os.Getenv("RUNLS_BENCH_SHAPE"); shape {
	case "":
	case "few":
		opts = opts.FewFiles()
	case "many":
		opts = opts.ManyFiles()
	default:
		return "", Options{}, fmt.Errorf("RUNLS_BENCH_SHAPE %q: want few or many", shape)
	}
	dir, err := Cached(ctx, cache, opts)
	return dir, opts, err
}
