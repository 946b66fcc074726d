package main

// This file holds `runls search --fleet URL` (spec §16): the request of §5
// over the runs shipped to a store, ranked by runls, items naming their runs.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"runls/fleet"
	"runls/retriever"
)

// fleetFlags are runls search's flags for the fleet.
type fleetFlags struct {
	url           string
	runs          runList
	partial       bool
	maxCandidates int
}

// runList is a repeated --run flag.
type runList []string

func (r *runList) String() string     { return strings.Join(*r, ",") }
func (r *runList) Set(v string) error { *r = append(*r, v); return nil }

// searchFleet answers a search over the fleet; args are the query's words.
func searchFleet(ctx context.Context, ff *fleetFlags, req retriever.Request, words []string, asJSON bool, stdout, stderr io.Writer) int {
	st, err := fleet.NewVictoriaLogs(ff.url)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	st.AllowPartial = ff.partial
	if len(words) == 0 {
		return usageError(stderr, "search --fleet needs a query")
	}
	req.Query = strings.Join(words, " ")
	s := &fleet.Searcher{Store: st, MaxCandidates: ff.maxCandidates}
	res, err := s.Search(ctx, fleet.Request{Request: req, Runs: ff.runs})
	if err != nil {
		return fail(stderr, err)
	}
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return fail(stderr, err)
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
