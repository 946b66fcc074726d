package main

// -mode failures (issue 27): run/failures through the real server against
// run/search, both beside a request to an unknown method, A B A B in one
// run so that both see the machine in one state. The first run/failures
// (which reads the run's candidate records once) and one after an append
// (which reads what was appended) are timed apart. Target: the median
// run/failures within 2x the median run/search.
//
// Each request is timed twice: until its answer's body is read whole (in
// hand), and until the client has decoded its envelope too (encoding/json
// scanning the whole body for the result's end: the figure of the first
// version of this benchmark). An editor pays the first plus its own parse
// of the body (VS Code: JSON.parse in Node); when node is on PATH, that
// parse of one answer of each method is timed there, and the editor's
// figure is in hand plus parse. The target is held against the editor's.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	inHand := map[string][]time.Duration{}
	timed := func(method string, params any) (json.RawMessage, time.Duration, error) {
		start := time.Now()
		res, rerr, readAt, err := srv.c.callTimed(method, params, indexingWait)
		d := time.Since(start)
		if err == nil && rerr != nil && method != unknownMethod {
			err = fmt.Errorf("%s: %v", method, rerr)
		}
		if err == nil {
			inHand[method] = append(inHand[method], readAt.Sub(start))
		}
		return res, d, err
	}
	cpu0 := cpuTime(srv.cmd.Process.Pid)
	res, first, err := timed("run/failures", map[string]any{})
	if err != nil {
		return 0, err
	}
	firstCPU := cpuTime(srv.cmd.Process.Pid) - cpu0
	var fr retriever.FailuresResult
	if err := json.Unmarshal(res, &fr); err != nil {
		return 0, err
	}
	records := 0
	for _, g := range fr.Groups {
		records += g.Count
	}
	queries := rungen.Queries(cfg.opts, 50)
	searchAnswer, _, err := timed("run/search", map[string]any{"query": queries[0]})
	if err != nil {
		return 0, err
	}
	clear(inHand)
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
	held := map[string][]time.Duration{}
	for m, ds := range inHand {
		held[m] = slices.Clone(ds)
	}
	parse := map[string]time.Duration{}
	if _, err := exec.LookPath("node"); err == nil {
		for method, answer := range map[string]json.RawMessage{"run/failures": res, "run/search": searchAnswer} {
			if parse[method], err = nodeParse(answer); err != nil {
				return 0, err
			}
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
	return printFailures(os.Stdout, cfg, r, len(fr.Groups), records, len(res), first, firstCPU, fail, search, unknown, held, parse, afterAppend, rss), nil
}

// nodeParse times Node's JSON.parse of an answer (wrapped as the message
// an editor reads): the median of 200 parses.
func nodeParse(answer json.RawMessage) (time.Duration, error) {
	f, err := os.CreateTemp("", "failures-answer-*.json")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	msg := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":`), answer...), '}')
	if _, err := f.Write(msg); err != nil {
		f.Close()
		return 0, err
	}
	f.Close()
	const script = `const fs = require("fs"); const text = fs.readFileSync(process.argv[1], "utf8"); const t = [];
for (let i = 0; i < 200; i++) { const s = process.hrtime.bigint(); JSON.parse(text); t.push(Number(process.hrtime.bigint() - s)); }
t.sort((a, b) => a - b); console.log(t[t.length >> 1]);`
	out, err := exec.Command("node", "-e", script, f.Name()).Output()
	if err != nil {
		return 0, fmt.Errorf("node: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("node said %q: %w", out, err)
	}
	return time.Duration(ns), nil
}

func printFailures(w io.Writer, cfg config, r *report, groups, records, answerBytes int, first, firstCPU time.Duration, fail, search, unknown []time.Duration, held map[string][]time.Duration, parse map[string]time.Duration, afterAppend []time.Duration, rss memory) int {
	fmt.Fprintf(w, "run: %s; %d files, indexed in %v\n", cfg.shapeTag, r.files, r.indexing.Round(time.Millisecond))
	fmt.Fprintf(w, "run/failures answer: %d groups of %d records, %d bytes of JSON\n", groups, records, answerBytes)
	fmt.Fprintf(w, "first run/failures (reads the candidate records): %s, the server's CPU meanwhile %s\n", ms(first), ms(firstCPU))
	fmt.Fprintf(w, "%d of each, A B A B; in hand (body read) / envelope decoded by encoding/json:\n", len(fail))
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"run/failures", fail}, {"run/search", search}, {unknownMethod, unknown}} {
		h := held[m.name]
		fmt.Fprintf(w, "  %-24s median %s / %s  p99 %s / %s\n", m.name, ms(median(h)), ms(median(m.ds)), ms(pct(h, 0.99)), ms(pct(m.ds, 0.99)))
	}
	fmt.Fprintf(w, "run/failures after an append (reads what was appended): median %s  max %s\n", ms(median(afterAppend)), ms(pct(afterAppend, 1)))
	fmt.Fprintf(w, "RSS at the end %d MB, peak %d MB\n", rss.rss>>20, rss.peak>>20)
	fh, sh := median(held["run/failures"]), median(held["run/search"])
	fmt.Fprintf(w, "run/failures over run/search, in hand (medians): %.2fx; envelope decoded: %.2fx\n", float64(fh)/float64(sh), float64(median(fail))/float64(median(search)))
	if len(parse) == 0 {
		fmt.Fprintln(w, "node is not on PATH: the editor's parse is not timed; the target is held against the answers in hand")
		ratio := float64(fh) / float64(sh)
		fmt.Fprintf(w, "target <= %.1fx: %.2fx\n", maxFailuresOverSearch, ratio)
		if ratio > maxFailuresOverSearch {
			fmt.Fprintln(w, "FAIL: run/failures is slower than the target")
			return 1
		}
		return 0
	}
	pf, ps := parse["run/failures"], parse["run/search"]
	ratio := float64(fh+pf) / float64(sh+ps)
	fmt.Fprintf(w, "Node's JSON.parse of one answer (median of 200): run/failures %s, run/search %s\n", ms(pf), ms(ps))
	fmt.Fprintf(w, "what an editor pays (in hand + parse): run/failures %s, run/search %s: %.2fx (target <= %.1fx)\n", ms(fh+pf), ms(sh+ps), ratio, maxFailuresOverSearch)
	if ratio > maxFailuresOverSearch {
		fmt.Fprintln(w, "FAIL: run/failures is slower than the target")
		return 1
	}
	return 0
}
