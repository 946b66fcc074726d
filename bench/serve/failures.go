//go:build linux

package main

// -mode failures (issue 27): run/failures through the real server against
// run/search, both beside a request to an unknown method, A B A B in one
// run so that both see the machine in one state. The first run/failures
// (which reads the run's candidate records once) and one after an append
// (which reads what was appended) are timed apart.
//
// Four run/failures requests are timed: §9's whole answer (params {}, as
// `runls failures --json` prints it: 200 groups of up to 100 locations),
// and what the editors send: VS Code's Failures view lists the groups
// collapsed ({"maxRecords":0}) and fetches a group's records when it is
// expanded ({"pattern":…}); Neovim's :Runls failures a group's first
// record ({"maxRecords":1}).
//
// Each request is timed twice: until its answer's body is read whole (in
// hand), and until the client has decoded its envelope too (encoding/json
// scanning the whole body for the result's end: the figure of the first
// version of this benchmark). An editor pays the first plus its own parse
// of the body (VS Code: JSON.parse in Node); when node is on PATH, that
// parse of one answer of each request is timed there, and the editor's
// figure is in hand plus parse. The target, the median within 2x
// run/search's, is held against the editor's figure of each request the
// editors send; §9's whole answer is printed beside them, not held.

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
	// The run is appended to: a copy, in the cache folder (the run there
	// may be a link to a run shared read-only).
	if cached, err = filepath.EvalSymlinks(cached); err != nil {
		return 0, err
	}
	dir, err := rungen.Copy(cached, cfg.cache)
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
	// timed sends one request; name is what it is timed as.
	timed := func(name, method string, params any) (json.RawMessage, time.Duration, error) {
		start := time.Now()
		res, rerr, readAt, err := srv.c.callTimed(method, params, indexingWait)
		d := time.Since(start)
		if err == nil && rerr != nil && method != unknownMethod {
			err = fmt.Errorf("%s %v: %v", method, params, rerr)
		}
		if err == nil {
			inHand[name] = append(inHand[name], readAt.Sub(start))
		}
		return res, d, err
	}
	cpu0 := cpuTime(srv.cmd.Process.Pid)
	res, first, err := timed("first", "run/failures", map[string]any{})
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
	searchAnswer, _, err := timed("run/search", "run/search", map[string]any{"query": queries[0]})
	if err != nil {
		return 0, err
	}
	kinds := failuresKinds(fr)
	answers := map[string]json.RawMessage{"run/search": searchAnswer}
	clear(inHand)
	decoded := map[string][]time.Duration{}
	for round := 0; round < cfg.rounds; round++ {
		for i, q := range queries {
			for _, k := range kinds {
				a, d, err := timed(k.name, "run/failures", k.params(i))
				if err != nil {
					return 0, err
				}
				if _, ok := answers[k.name]; !ok {
					answers[k.name] = a
				}
				decoded[k.name] = append(decoded[k.name], d)
			}
			_, ds, err := timed("run/search", "run/search", map[string]any{"query": q})
			if err != nil {
				return 0, err
			}
			_, du, err := timed(unknownMethod, unknownMethod, map[string]any{})
			if err != nil {
				return 0, err
			}
			decoded["run/search"], decoded[unknownMethod] = append(decoded["run/search"], ds), append(decoded[unknownMethod], du)
		}
	}
	held := map[string][]time.Duration{}
	for m, ds := range inHand {
		held[m] = slices.Clone(ds)
	}
	parse := map[string]time.Duration{}
	if _, err := exec.LookPath("node"); err == nil {
		for name, answer := range answers {
			if parse[name], err = nodeParse(answer); err != nil {
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
		_, d, err := timed("append", "run/failures", map[string]any{"maxRecords": 0})
		if err != nil {
			return 0, err
		}
		afterAppend = append(afterAppend, d)
	}
	rss := readMemory(srv.cmd.Process.Pid)
	if err := srv.shutdown(); err != nil {
		return 0, err
	}
	sizes := map[string]int{}
	for name, a := range answers {
		sizes[name] = len(a)
	}
	return printFailures(os.Stdout, cfg, r, len(fr.Groups), records, first, firstCPU, kinds, decoded, held, parse, sizes, afterAppend, rss), nil
}

// failuresKind is one run/failures request the benchmark times.
type failuresKind struct {
	name   string
	held   bool // an editor sends it: the target is held against it
	params func(i int) map[string]any
}

// failuresKinds are §9's whole answer and what the editors ask for; a
// group expanded is each of the answer's groups in turn.
func failuresKinds(whole retriever.FailuresResult) []failuresKind {
	fixed := func(p map[string]any) func(int) map[string]any { return func(int) map[string]any { return p } }
	kinds := []failuresKind{
		{"§9's whole answer {}", false, fixed(map[string]any{})},
		{"VS Code's list {maxRecords:0}", true, fixed(map[string]any{"maxRecords": 0})},
		{"Neovim's list {maxRecords:1}", true, fixed(map[string]any{"maxRecords": 1})},
	}
	if len(whole.Groups) > 0 {
		kinds = append(kinds, failuresKind{"a group expanded {pattern}", true, func(i int) map[string]any {
			return map[string]any{"pattern": whole.Groups[i%len(whole.Groups)].Pattern}
		}})
	}
	return kinds
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

func printFailures(w io.Writer, cfg config, r *report, groups, records int, first, firstCPU time.Duration, kinds []failuresKind, decoded, held map[string][]time.Duration, parse map[string]time.Duration, sizes map[string]int, afterAppend []time.Duration, rss memory) int {
	fmt.Fprintf(w, "run: %s; %d files, indexed in %v\n", cfg.shapeTag, r.files, r.indexing.Round(time.Millisecond))
	fmt.Fprintf(w, "run/failures answer: %d groups of %d records\n", groups, records)
	fmt.Fprintf(w, "first run/failures (reads the candidate records): %s, the server's CPU meanwhile %s\n", ms(first), ms(firstCPU))
	names := []string{}
	for _, k := range kinds {
		names = append(names, k.name)
	}
	names = append(names, "run/search", unknownMethod)
	fmt.Fprintf(w, "%d of each, A B A B; in hand (body read) / envelope decoded by encoding/json; the answer's bytes:\n", len(decoded["run/search"]))
	for _, name := range names {
		h, d := held[name], decoded[name]
		fmt.Fprintf(w, "  %-32s median %s / %s  p99 %s / %s  %7d bytes\n", name, ms(median(h)), ms(median(d)), ms(pct(h, 0.99)), ms(pct(d, 0.99)), sizes[name])
	}
	fmt.Fprintf(w, "run/failures {maxRecords:0} after an append (reads what was appended): median %s  max %s\n", ms(median(afterAppend)), ms(pct(afterAppend, 1)))
	fmt.Fprintf(w, "RSS at the end %d MB, peak %d MB\n", rss.rss>>20, rss.peak>>20)
	sh := median(held["run/search"])
	if len(parse) == 0 {
		fmt.Fprintln(w, "node is not on PATH: the editor's parse is not timed; the target is held against the answers in hand")
	} else {
		fmt.Fprintf(w, "Node's JSON.parse of one answer (median of 200): run/search %s\n", ms(parse["run/search"]))
	}
	status := 0
	for _, k := range kinds {
		fh := median(held[k.name])
		editor := float64(fh+parse[k.name]) / float64(sh+parse["run/search"])
		verdict := "not held (§9's size: the CLI's --json, a client asking for it)"
		if k.held {
			verdict = fmt.Sprintf("target <= %.1fx", maxFailuresOverSearch)
			if editor > maxFailuresOverSearch {
				verdict += ": FAIL"
				status = 1
			}
		}
		fmt.Fprintf(w, "%-32s in hand %.2fx; Node parse %s; what an editor pays (in hand + parse) %s against run/search's %s: %.2fx, %s\n",
			k.name, float64(fh)/float64(sh), ms(parse[k.name]), ms(fh+parse[k.name]), ms(sh+parse["run/search"]), editor, verdict)
	}
	if status != 0 {
		fmt.Fprintln(w, "FAIL: run/failures as an editor asks for it is slower than the target")
	}
	return status
}
