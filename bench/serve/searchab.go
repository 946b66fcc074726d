//go:build linux

package main

// -mode searchab (issue 33): the set's median of two binaries in one run,
// A B A B. Two servers of -runls and -before answer the same queries on
// the same copy of the run, each query asked of one then of the other (the
// order swapped every round), each at top 5 and top 10 and followed by a
// request to an unknown method, so that both meet the machine in one state;
// then the same by two servers without the context. It prints, for each
// binary and way, the set's median over its own round trip, the slowest
// query at top 10, and the servers' CPU time a request (user and system,
// from /proc: steadier than wall time on a loaded machine). Every answer
// of the warm-up round must be the same from both (the same items in the
// same order with the same evidence): it exits 1 when one differs.
//
// Its round trip is about twice one server's (0.10 against 0.05 ms: this
// client's with two connections, not the servers', bench/README.md, the
// twentieth session), so its ratios are lower than serve.sh's: it compares
// two binaries; issue 33's row is read from serve.sh.
//
//	go run ./bench/serve -mode searchab -runls new -before old -copy /tmp/x-run -rounds 10
//
// With -copy DIR the copy of the run (with the storm) is made there once
// and kept, and each binary's cache entry beside it (DIR-cache-a, -b), so
// that a later run reopens both instead of indexing the run again.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"runls/internal/rungen"
	"runls/retriever"
)

func runSearchAB(cfg config) (int, error) {
	if cfg.before == "" {
		return 0, errors.New("-mode searchab wants -before (the binary to compare with)")
	}
	dir, cleanup, err := searchABCopy(cfg)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	queries := benchQueries(cfg)
	bins := [2]string{cfg.runls, cfg.before}
	names := [2]string{"runls", "before"}
	var reps [2]*report
	var cpu [2]time.Duration
	var switches [2]int64
	var asked [2]int
	fmt.Printf("load at the start: %s\n", loadAverage())
	code := 0
	for _, context := range []bool{true, false} {
		c := cfg
		if !context {
			c.episode, c.conv = "", ""
		}
		var srvs [2]*server
		for i := range bins {
			c.runls = bins[i]
			srv, err := startServerWith(c, dir, nil, append(os.Environ(), "RUNLS_CACHE_DIR="+dir+"-cache-"+names[i]))
			if err != nil {
				return 0, err
			}
			defer srv.stop()
			if err := srv.waitIndexed(&report{}); err != nil {
				return 0, err
			}
			srvs[i] = srv
			if reps[i] == nil {
				reps[i] = &report{cfg: cfg, bytes: p99FromBytes}
			}
		}
		// A reopen publishes every record file's diagnostics in the
		// background, paced while requests come (one file a second), up to
		// 360 KB of JSON a file at 1 GB: the rounds begin once none has
		// come for 2 s, and the counts say none came during them (settledCPU
		// waited for them so far; this says so rather than trusting it).
		for i, s := range srvs {
			n := s.waitDiagnostics(2 * time.Second)
			fmt.Printf("%s, %s: %d files' diagnostics before the rounds\n", names[i], contextName(context), n)
		}
		same, err := sameAnswers(srvs, queries, context)
		if err != nil {
			return 0, err
		}
		if !same {
			code = 1
		}
		var before [2]time.Duration
		var switchesBefore, diagnosticsBefore [2]int64
		for i, s := range srvs {
			before[i] = settledCPU(s.cmd.Process.Pid)
			diagnosticsBefore[i] = s.diagnostics.Load()
			switchesBefore[i] = contextSwitches(s.cmd.Process.Pid)
		}
		for round := range cfg.rounds {
			for _, q := range queries {
				for k := range srvs {
					i := (k + round) % 2
					if err := timeQuery(srvs[i].c, q, context, reps[i]); err != nil {
						return 0, fmt.Errorf("%s: %w", names[i], err)
					}
					asked[i] += 3
				}
			}
		}
		for i, s := range srvs {
			during := s.diagnostics.Load() - diagnosticsBefore[i]
			fmt.Printf("%s, %s: %d files' diagnostics during the rounds\n", names[i], contextName(context), during)
			cpu[i] += cpuTime(s.cmd.Process.Pid) - before[i]
			switches[i] += contextSwitches(s.cmd.Process.Pid) - switchesBefore[i]
			if err := s.shutdown(); err != nil {
				return 0, err
			}
		}
	}
	fmt.Printf("load at the end: %s\n", loadAverage())
	for i, r := range reps {
		var b bytes.Buffer
		r.queries = queries
		fmt.Fprintf(&b, "\n== %s (%s)\n", names[i], bins[i])
		slowest := r.printQueries(&b)
		fails := r.printSetMedians(&b)
		fmt.Fprintf(&b, "CPU a request (searches and unknown methods, %d): %.1f µs\n", asked[i], float64(cpu[i].Microseconds())/float64(max(asked[i], 1)))
		fmt.Fprintf(&b, "context switches a request: %.2f\n", float64(switches[i])/float64(max(asked[i], 1)))
		for w, q := range slowest {
			if d := median(r.perQuery[w][q]); ways[w].topK == 10 && d > maxTop10 {
				fails = append(fails, fmt.Sprintf("%s, %s: median %s > %s", q, ways[w].name, ms(d), ms(maxTop10)))
			}
		}
		for _, f := range fails {
			fmt.Fprintf(&b, "FAIL: %s\n", f)
		}
		os.Stdout.Write(b.Bytes())
		if i == 0 && len(fails) > 0 {
			code = 1
		}
	}
	return code, nil
}

// contextSwitches is how many times a process's threads were switched out
// so far, voluntarily or not (/proc/PID/task/*/status): a request that
// wakes another goroutine (the watcher's barrier, before issue 33's change
// probe) costs some.
func contextSwitches(pid int) int64 {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	var n int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}

// settledCPU waits until a server's CPU time stops growing (a first
// index's entry written, a reopen's diagnostics published: at most a
// minute) and returns it.
func settledCPU(pid int) time.Duration {
	last := cpuTime(pid)
	for range 200 {
		time.Sleep(300 * time.Millisecond)
		now := cpuTime(pid)
		if now-last <= 10*time.Millisecond {
			return now
		}
		last = now
	}
	return last
}

// timeQuery asks q at top 5 and top 10, then the unknown method, and adds
// the times to r as measureSearches does.
func timeQuery(c *client, q timedQuery, context bool, r *report) error {
	for w, way := range ways {
		if way.context != context {
			continue
		}
		start := time.Now()
		_, rerr, err := c.call("run/search", q.params(way.topK, context), requestWait)
		d := time.Since(start)
		if err != nil || rerr != nil {
			return fmt.Errorf("run/search %q: %v %v", q.text, err, rerr)
		}
		if r.perQuery[w] == nil {
			r.perQuery[w] = map[string][]time.Duration{}
		}
		r.perQuery[w][q.label()] = append(r.perQuery[w][q.label()], d)
	}
	start := time.Now()
	_, rerr, err := c.call(unknownMethod, map[string]any{}, requestWait)
	d := time.Since(start)
	if err != nil || rerr == nil {
		return fmt.Errorf("%s: %v (answered without an error: %v)", unknownMethod, err, rerr == nil)
	}
	r.unknownBy[noContext(context)] = append(r.unknownBy[noContext(context)], d)
	return nil
}

// sameAnswers asks every query of both servers at top 5 and 10 (the warm-up
// round) and reports whether every answer's items are the same, printing
// the first that differs.
func sameAnswers(srvs [2]*server, queries []timedQuery, context bool) (bool, error) {
	same := true
	for _, q := range queries {
		for _, way := range ways {
			if way.context != context {
				continue
			}
			var got [2]retriever.Result
			for i, s := range srvs {
				res, rerr, err := s.c.call("run/search", q.params(way.topK, context), requestWait)
				if err != nil || rerr != nil {
					return false, fmt.Errorf("run/search %q: %v %v", q.text, err, rerr)
				}
				if err := json.Unmarshal(res, &got[i]); err != nil {
					return false, err
				}
			}
			a, _ := json.Marshal(got[0].Items)
			b, _ := json.Marshal(got[1].Items)
			if !bytes.Equal(a, b) && same {
				fmt.Printf("DIFFERENT ANSWERS: %q, %s:\n  runls:  %.600s\n  before: %.600s\n", q.label(), way.name, a, b)
				same = false
			}
		}
	}
	return same, nil
}

// searchABCopy is the run's working copy: -copy's, made once and kept, or a
// temporary one removed by cleanup.
func searchABCopy(cfg config) (dir string, cleanup func(), err error) {
	if cfg.copyDir != "" {
		if _, err := os.Stat(cfg.copyDir); err == nil {
			dir, err := filepath.EvalSymlinks(cfg.copyDir)
			return dir, func() {}, err
		}
	}
	cached, err := rungen.Cached(context.Background(), cfg.cache, cfg.opts)
	if err != nil {
		return "", nil, err
	}
	files, err := agentFiles(cached)
	if err != nil {
		return "", nil, err
	}
	parent := filepath.Dir(cached)
	if cfg.copyDir != "" {
		parent = filepath.Dir(cfg.copyDir)
	}
	dir, err = rungen.Copy(cached, parent)
	if err != nil {
		return "", nil, err
	}
	if _, err := addStorm(dir, files, cfg.storm); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	if cfg.copyDir != "" {
		if err := os.Rename(dir, cfg.copyDir); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		dir, err = filepath.EvalSymlinks(cfg.copyDir)
		return dir, func() {}, err
	}
	dir, err = filepath.EvalSymlinks(dir)
	return dir, func() {
		for _, p := range []string{dir, dir + "-cache-runls", dir + "-cache-before"} {
			os.RemoveAll(p)
		}
	}, err
}

// contextName names a way of asking for searchab's lines.
func contextName(context bool) string {
	if context {
		return "with the context"
	}
	return "without the context"
}
