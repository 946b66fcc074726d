//go:build linux

package main

// -mode queries prints the searchab set for a benchmark outside this
// program (an editor's own client: bench/nvim.sh): the
// run's working copy (made as searchab makes it, with -copy), the settings
// of a server with the editor's context, and each query's run/search params
// with the context and without (topK left to the caller), as JSON.
//
//	go run ./bench/serve -mode queries -shape big -copy /tmp/x-run

import (
	"encoding/json"
	"os"
	"slices"

	"runls/internal/rungen"
)

// querySet is what -mode queries prints.
type querySet struct {
	Run      string         `json:"run"`      // the run's working copy ("" without -copy)
	Settings map[string]any `json:"settings"` // initializationOptions of the server with the context
	Queries  []queryParams  `json:"queries"`
}

type queryParams struct {
	Label     string         `json:"label"`
	Context   map[string]any `json:"context"`   // asked of the server with the settings
	NoContext map[string]any `json:"noContext"` // asked of a server without them
}

func runQueries(cfg config) (int, error) {
	// The copy only with -copy: the set is the generator's, and a temporary
	// copy (1 GB and the storm) would be of no use to the caller.
	dir := ""
	if cfg.copyDir != "" {
		var err error
		if dir, _, err = searchABCopy(cfg); err != nil {
			return 0, err
		}
	}
	set := querySet{Run: dir, Settings: serverSettings(cfg)}
	queries := benchQueries(cfg)
	for _, q := range queries {
		with, without := q.params(0, true), q.params(0, false)
		delete(with, "topK")
		delete(without, "topK")
		set.Queries = append(set.Queries, queryParams{Label: q.label(), Context: with, NoContext: without})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return 0, enc.Encode(set)
}

// benchQueries is searchab's set: the generator's 50 queries, the storm's
// when the copy has one, those -match keeps.
func benchQueries(cfg config) []timedQuery {
	var queries []timedQuery
	for _, q := range rungen.Queries(cfg.opts, 50) {
		queries = append(queries, timedQuery{text: q})
	}
	if cfg.storm > 0 {
		queries = append(queries, stormQuery)
	}
	if cfg.match != nil {
		queries = slices.DeleteFunc(queries, func(q timedQuery) bool { return !cfg.match.MatchString(q.label()) })
	}
	return queries
}
