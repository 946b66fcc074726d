package main

// -mode failures (issue 27): run/failures through the real server against
// run/search, both beside a request to an unknown method, A B A B in one
// run so that both see the machine in one state. The first run/failures
// (which reads the run's candidate records once) and one after an append
// (which reads what was appended) are timed apart. Target: the median
// run/failures within 2x the median run/search.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"runls/internal/rungen"
	"runls/retriever"
)

// maxFailuresOverSearch is the target: run/failures' median over
// run/search's.
const maxFailuresOverSearch = 2.0

func runFailuresBench(cfg config) (int, error) {
	ctx := context.Background()
	fmt.Fprintf(os.Stderr, "run %s (generated once, cached under %s)\n", cfg.shapeTag, cfg.cache)
	cached, err := rungen.Cached(ctx, cfg.cache, cfg.opts)
	if err != nil {
		return 0, err
	}
	dir, err := rungen.Copy(cached, filepath.Dir(cached))
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cacheDir := dir + "-cache"
	defer os.RemoveAll(cacheDir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return 0, err
	}
	files, err := agentFiles(dir)
	if err != nil {
		return 0, err
	}
	r := &report{cfg: cfg, files: len(files)}
	var extra []string
	if cfg.noCache {
		extra = []string{"--no-cache"} // the cache's writes aside (they share the cores)
	}
	srv, err := startServerWith(cfg, dir, extra, append(os.Environ(), "RUNLS_CACHE_DIR="+cacheDir))
	if err != nil {
		return 0, err
	}
	defer srv.stop()
	if err := srv.waitIndexed(r); err != nil {
		return 0, err
	}
	timed := func(method string, params any) (json.RawMessage, time.Duration, error) {
		start := time.Now()
		res, rerr, err := srv.c.call(method, params, indexingWait)
		d := time.Since(start)
		if err == nil && rerr != nil && method != unknownMethod {
			err = fmt.Errorf("%s: %v", method, rerr)
		}
		return res, d, err
	}
	res, first, err := timed("run/failures", map[string]any{})
	if err != nil {
		return 0, err
	}
	var fr retriever.FailuresResult
	if err := json.Unmarshal(res, &fr); err != nil {
		return 0, err
	}
	records := 0
	for _, g := range fr.Groups {
		records += g.Count
	}
	queries := rungen.Queries(cfg.opts, 50)
	var fail, search, unknown []time.Duration
	for round := 0; round < cfg.rounds; round++ {
		for _, q := range queries {
			_, df, err := timed("run/failures", map[string]any{})
			if err != nil {
				return 0, err
			}
			_, ds, err := timed("run/search", map[string]any{"query": q})
			if err != nil {
				return 0, err
			}
			_, du, err := timed(unknownMethod, map[string]any{})
			if err != nil {
				return 0, err
			}
			fail, search, unknown = append(fail, df), append(search, ds), append(unknown, du)
		}
	}
	// After an append, the files' memos read what was appended only.
	var afterAppend []time.Duration
	target := filepath.Join(dir, files[len(files)/2].rel)
	for i := range 20 {
		line := fmt.Sprintf("2026-10-30 12:00:%02d.000 ERROR [running] [conv-1] Bench tool call %d failed\n", i%60, i)
		if err := appendTo(target, line); err != nil {
			return 0, err
		}
		_, d, err := timed("run/failures", map[string]any{})
		if err != nil {
			return 0, err
		}
		afterAppend = append(afterAppend, d)
	}
	rss := readMemory(srv.cmd.Process.Pid)
	if err := srv.shutdown(); err != nil {
		return 0, err
	}
	return printFailures(os.Stdout, cfg, r, len(fr.Groups), records, len(res), first, fail, search, unknown, afterAppend, rss), nil
}

func printFailures(w io.Writer, cfg config, r *report, groups, records, answerBytes int, first time.Duration, fail, search, unknown, afterAppend []time.Duration, rss memory) int {
	fmt.Fprintf(w, "run: %s; %d files, indexed in %v\n", cfg.shapeTag, r.files, r.indexing.Round(time.Millisecond))
	fmt.Fprintf(w, "run/failures answer: %d groups of %d records, %d bytes of JSON\n", groups, records, answerBytes)
	fmt.Fprintf(w, "first run/failures (reads the candidate records): %s\n", ms(first))
	fmt.Fprintf(w, "%d of each, A B A B:\n", len(fail))
	fmt.Fprintf(w, "  run/failures   median %s  p99 %s\n", ms(median(fail)), ms(pct(fail, 0.99)))
	fmt.Fprintf(w, "  run/search     median %s  p99 %s\n", ms(median(search)), ms(pct(search, 0.99)))
	fmt.Fprintf(w, "  unknown method median %s  p99 %s\n", ms(median(unknown)), ms(pct(unknown, 0.99)))
	fmt.Fprintf(w, "run/failures after an append (reads what was appended): median %s  max %s\n", ms(median(afterAppend)), ms(pct(afterAppend, 1)))
	fmt.Fprintf(w, "RSS at the end %d MB, peak %d MB\n", rss.rss>>20, rss.peak>>20)
	ratio := float64(median(fail)) / float64(median(search))
	fmt.Fprintf(w, "run/failures over run/search (medians): %.2fx (target <= %.1fx)\n", ratio, maxFailuresOverSearch)
	if ratio > maxFailuresOverSearch {
		fmt.Fprintln(w, "FAIL: run/failures is slower than the target")
		return 1
	}
	return 0
}
