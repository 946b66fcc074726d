package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"runls/retriever"
)

// runFailures is `runls failures` (spec §10): run/failures, one line a
// group, `count  pattern  (agents, episodes, first … last)`, then its first
// record's location as `path:line:`; or the run/failures result (--json).
// --pattern (runls' own, as run/failures' pattern) prints one group and
// every record of it listed.
// Exit status as runls search: 0 a group, 1 none, 2 an error.
func runFailures(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("failures", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var req retriever.FailuresRequest
	fs.StringVar(&req.Episode, "episode", "", "only episode `episode-N`; default: the whole run")
	fs.StringVar(&req.Agent, "agent", "", "only agent `A`'s files (its folder's name)")
	fs.StringVar(&req.MinLevel, "min-level", "", "records of level `L` or above (TRACE, DEBUG, INFO, WARN, ERROR; default ERROR), and every record with an exception")
	fs.StringVar(&req.Pattern, "pattern", "", "only the group of pattern `P` (as printed), wherever it ranks, and every record of it listed (at most 100)")
	mask := fs.Bool("mask", false, "hide paths outside the run folder and credentials")
	asJSON := fs.Bool("json", false, "print the run/failures result as JSON")
	cache := addCacheFlags(fs)
	use := usage{failuresSynopsis, "failures"}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if helpRequested(err, fs, failuresSynopsis, failuresAbout, stdout) {
			return exitFound
		}
		return use.errorf(stderr, "%v", err)
	}
	if len(pos) != 1 {
		return use.errorf(stderr, "failures needs one run folder")
	}
	if err := req.Validate(); err != nil {
		return use.errorf(stderr, "%v", err)
	}
	ix, err := openIndex(ctx, pos[0], *mask, "", cache, stderr)
	if err != nil {
		return use.fail(stderr, err)
	}
	defer ix.Close()
	res, err := ix.Failures(ctx, req)
	if err != nil {
		return use.fail(stderr, err)
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return use.fail(stderr, err)
		}
	} else {
		cwd, _ := os.Getwd()
		w := bufio.NewWriter(stdout)
		for _, g := range res.Groups {
			writeFailureGroup(w, cwd, g, req.Pattern != "")
		}
		if err := w.Flush(); err != nil {
			return use.fail(stderr, err)
		}
	}
	if len(res.Groups) == 0 {
		return exitNotFound
	}
	return exitFound
}

const (
	failuresSynopsis = "runls failures [flags] RUN_FOLDER"
	failuresAbout    = `Prints the run's failures: its ERROR records (--min-level widens) and the
records that hold an exception line, grouped by their first line's message with
numbers, ids, quoted strings and paths taken out, most frequent first. One line
a group, count  pattern  (agents, episodes, first … last), then its first
record as path:line:; with --pattern, that one group and each of its records
listed (at most 100, the first in time). Flags may come before or after the
run folder.
Exit status: 0 failures listed, 1 none, 2 error.`
)

// writeFailureGroup writes a group's line and its first record's location
// (all: every record's listed).
func writeFailureGroup(w io.Writer, cwd string, g retriever.FailureGroup, all bool) {
	span := "no time"
	if g.First != nil {
		span = *g.First + " … " + *g.Last
	}
	fmt.Fprintf(w, "%d  %s  (%s, %s, %s)\n", g.Count, g.Pattern, strings.Join(g.Agents, " "), strings.Join(g.Episodes, " "), span)
	n := min(len(g.Records), 1)
	if all {
		n = len(g.Records)
	}
	for i := range n {
		fmt.Fprintf(w, "%s:%d:\n", displayPath(cwd, g.Paths[i]), g.Records[i].Range.Start.Line+1)
	}
}
