//go:build linux

package main

// The reopen rounds of -mode reopen (issue 33): after the three opens, the
// run is reopened -reopens times through the server (process start to the
// first answered run/search, and its VmHWM then: the open's peak, the
// entry's mapped pages counted) and through the CLI (`runls search` from
// its start to its exit, and its peak RSS), each round beside one `rg`
// scan of the same query; with -before BIN (main before a change), BIN's
// entry is written once on the same cache folder (its format is another
// entry) and its reopens are timed in turn with runls's, A B A B, so that
// both meet the same load. The load average is printed at the start and
// the end. It exits 1 when a target of issue 33 fails for -runls: the
// reopen to the first answer ≤ 0.1 s (server and CLI, the rounds' median)
// and the CLI's peak RSS ≤ 0.15x the run, on a run of up to maxReopenRun.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"runls/internal/rungen"
)

// The targets of issue 33.
const (
	maxReopenAnswer     = 100 * time.Millisecond // a run of up to maxReopenRun in few files (the 1 GB run)
	maxReopenAnswerMany = 300 * time.Millisecond // a run of manyFrom files or more (the 100,000-file run)
	maxReopenAnswerBig  = time.Second            // a larger run (the 10 GB run)
	maxReopenPeak       = 0.15                   // the CLI's peak RSS, of a run of up to maxReopenRun
)

// reopenTarget is issue 33's bound on the reopen to the first answer for a
// run of this size and file count, and the row of its table it is.
func reopenTarget(runBytes int64, files int) (time.Duration, string) {
	switch {
	case files >= manyFrom:
		return maxReopenAnswerMany, "100,000 files"
	case runBytes > maxReopenRun:
		return maxReopenAnswerBig, "10 GB"
	}
	return maxReopenAnswer, "1 GB"
}

// reopenFigures are one binary's reopens.
type reopenFigures struct {
	name              string
	server, cli, rg   []time.Duration
	serverPeak, cliPk []int64
	partial           []string // the server's first answer's indexing notice, or ""
}

func reopenRounds(cfg config, dir, cacheDir string, files int, runBytes int64) (int, error) {
	q := rungen.Queries(cfg.opts, 1)[0]
	bins := []*reopenFigures{{name: "runls"}}
	runs := []string{cfg.runls}
	if cfg.before != "" {
		before := cfg
		before.runls = cfg.before
		if _, err := openOnce(before, dir, cacheDir, "before: first open", false); err != nil {
			return 0, fmt.Errorf("before: first open: %w", err)
		}
		bins, runs = append(bins, &reopenFigures{name: "before"}), append(runs, cfg.before)
	}
	loadStart := loadAverage()
	for round := range cfg.reopens {
		for i, f := range bins {
			c := cfg
			c.runls = runs[i]
			o, err := openOnce(c, dir, cacheDir, "reopen", false)
			if err != nil {
				return 0, fmt.Errorf("%s: reopen %d: %w", f.name, round, err)
			}
			d, peak, err := cliReopen(runs[i], dir, cacheDir, q)
			if err != nil {
				return 0, fmt.Errorf("%s: CLI reopen %d: %w", f.name, round, err)
			}
			var r report
			if err := measureRG(dir, []string{q}, 1, &r); err != nil {
				return 0, err
			}
			f.server, f.serverPeak = append(f.server, o.toSearch), append(f.serverPeak, o.peakRSS)
			f.partial = append(f.partial, o.partial)
			f.cli, f.cliPk, f.rg = append(f.cli, d), append(f.cliPk, peak), append(f.rg, r.rg[0])
		}
	}
	return printReopenRounds(os.Stdout, cfg, files, runBytes, q, bins, loadStart, loadAverage()), nil
}

// cliReopen times `runls search` of query on root with the cache folder,
// from its start to its exit, and gives its peak RSS.
func cliReopen(bin, root, cacheDir, query string) (time.Duration, int64, error) {
	args := append([]string{"search", "--cache-dir", cacheDir, root}, strings.Fields(query)...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // KiB on Linux
	}
	return d, peak, nil
}

// loadAverage is /proc/loadavg's first three figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func printReopenRounds(w io.Writer, cfg config, files int, runBytes int64, q string, bins []*reopenFigures, loadStart, loadEnd string) int {
	mb := func(n int64) string {
		return fmt.Sprintf("%.0f MB (%.2fx)", float64(n)/(1<<20), float64(n)/float64(runBytes))
	}
	fmt.Fprintf(w, "reopens, %d rounds A B A B (load average %s at the start, %s at the end), query %q:\n", cfg.reopens, loadStart, loadEnd, q)
	fmt.Fprintf(w, "%-7s %5s %16s %22s %16s %22s %12s\n", "binary", "round", "server answer", "server VmHWM", "CLI answer", "CLI peak RSS", "rg")
	for round := range cfg.reopens {
		for _, f := range bins {
			fmt.Fprintf(w, "%-7s %5d %16s %22s %16s %22s %12s", f.name, round+1, ms(f.server[round]), mb(f.serverPeak[round]), ms(f.cli[round]), mb(f.cliPk[round]), ms(f.rg[round]))
			if p := f.partial[round]; p != "" {
				fmt.Fprintf(w, "  (the server's answer partial: %s)", p)
			}
			fmt.Fprintln(w)
		}
	}
	for _, f := range bins {
		fmt.Fprintf(w, "%-7s median %14s %22s %16s %22s %12s\n", f.name, ms(median(f.server)), mb(medianBytes(f.serverPeak)), ms(median(f.cli)), mb(medianBytes(f.cliPk)), ms(median(f.rg)))
	}
	a := bins[0]
	t := &targets{w: w}
	check := t.check
	limit, row := reopenTarget(runBytes, files)
	check(median(a.server) <= limit, fmt.Sprintf("%s: reopen to the first answer through the server %s ≤ %v (rg %s)", row, ms(median(a.server)), limit, ms(median(a.rg))))
	check(median(a.cli) <= limit, fmt.Sprintf("%s: reopen to the first answer through the CLI %s ≤ %v (rg %s)", row, ms(median(a.cli)), limit, ms(median(a.rg))))
	if row == "1 GB" {
		check(float64(medianBytes(a.cliPk)) <= maxReopenPeak*float64(runBytes), fmt.Sprintf("1 GB: peak RSS of a CLI reopen %s ≤ %.2fx", mb(medianBytes(a.cliPk)), maxReopenPeak))
	}
	return t.status()
}

// targets prints each target's check, ok or FAIL, and counts the fails.
type targets struct {
	w     io.Writer
	fails int
}

func (t *targets) check(ok bool, what string) {
	mark := "ok  "
	if !ok {
		mark, t.fails = "FAIL", t.fails+1
	}
	fmt.Fprintf(t.w, "%s %s\n", mark, what)
}

// status is the exit status: 1 when a target failed.
func (t *targets) status() int { return min(t.fails, 1) }

func medianBytes(v []int64) int64 {
	ds := make([]time.Duration, len(v))
	for i, n := range v {
		ds[i] = time.Duration(n)
	}
	return int64(median(ds))
}
