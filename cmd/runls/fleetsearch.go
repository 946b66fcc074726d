package main

// This file holds `runls search --fleet URL` (spec §16): the request of §5
// over the runs shipped to a store, ranked by runls, items naming their runs.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"runls/fleet"
	"runls/retriever"
)

// fleetTraceEnv, set, has runls search --fleet print each query it asks the
// store, with its time (a tool for measuring, so not a flag users see).
const fleetTraceEnv = "RUNLS_FLEET_TRACE"

// fleetFlags are runls search's flags for the fleet.
type fleetFlags struct {
	url           string
	runs          runList
	partial       bool
	maxCandidates int
}

func addFleetFlags(fs *flag.FlagSet) *fleetFlags {
	ff := &fleetFlags{}
	fs.StringVar(&ff.url, "fleet", "", "search the runs shipped to the fleet store at `URL` (runls ship), not a run folder: every argument is the query")
	fs.Var(&ff.runs, "run", "with --fleet, search run `ID` only (repeatable; default every run)")
	fs.BoolVar(&ff.partial, "partial", false, "accept a partial answer, with a notice: of a run folder, at once, from what is indexed so far while its first index is built; with --fleet, of part of the store (a storage node down)")
	fs.IntVar(&ff.maxCandidates, "max-candidates", 0, "with --fleet, rank at most `N` records (default 2000 with --run, 200 over every run)")
	return ff
}

// runList is a repeated --run flag.
type runList []string

func (r *runList) String() string     { return strings.Join(*r, ",") }
func (r *runList) Set(v string) error { *r = append(*r, v); return nil }

// searchFleet answers a search over the fleet; words are the query's.
func searchFleet(ctx context.Context, ff *fleetFlags, use usage, req retriever.Request, topK string, words []string, asJSON bool, stdout, stderr io.Writer) int {
	st, err := fleet.NewVictoriaLogs(ff.url)
	if err != nil {
		return use.errorf(stderr, "%v", err)
	}
	st.AllowPartial = ff.partial
	if os.Getenv(fleetTraceEnv) != "" {
		st.Trace = stderr
	}
	if len(words) == 0 {
		return use.errorf(stderr, "search --fleet needs a query")
	}
	if topK != "" {
		k, err := strconv.Atoi(topK)
		if err != nil || k < 1 || k > retriever.MaxTopK {
			return use.errorf(stderr, "%v", retriever.TopKError(topK))
		}
		req.TopK = k
	}
	if err := req.Validate(); err != nil {
		return use.errorf(stderr, "%v", err)
	}
	req.Query = strings.Join(words, " ")
	s := &fleet.Searcher{Store: st, MaxCandidates: ff.maxCandidates}
	res, err := s.Search(ctx, fleet.Request{Request: req, Runs: ff.runs})
	if err != nil {
		return use.fail(stderr, err)
	}
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return use.fail(stderr, err)
		}
	} else {
		for _, it := range res.Items {
			fmt.Fprintf(stdout, "%s:%d:%d: %s\n", it.Path, it.Location.Range.Start.Line+1, it.ByteStart+1, it.Text)
		}
		printNotes(stderr, req, retriever.Result{Hidden: res.Hidden, Notices: res.Notices})
	}
	if len(res.Items) == 0 {
		return exitNotFound
	}
	return exitFound
}
