package main

// This file holds `runls mcp --fleet URL` (spec §16): the MCP server's
// search tool over the runs shipped to a fleet store. The server serves an
// engine; fleetEngine is one whose search is the fleet's and whose files
// are elsewhere: records and read answer that they are not served here.

import (
	"context"
	"errors"
	"io"

	"runls/fleet"
	"runls/mcpserver"
	"runls/retriever"
)

// fleetEngine is mcpserver's engine over a fleet store.
type fleetEngine struct {
	url      string
	searcher *fleet.Searcher
	runs     []string
}

var _ mcpserver.Engine = (*fleetEngine)(nil)

// errNotInFleet answers the tools that read a run's files.
var errNotInFleet = errors.New("the fleet serves search only: open a run with runls mcp RUN_FOLDER to list its records or read its files")

func (e *fleetEngine) Root() string { return e.url }

func (e *fleetEngine) Refresh(context.Context, func(retriever.Progress)) (retriever.Changes, error) {
	return retriever.Changes{}, nil
}

func (e *fleetEngine) Watch(ctx context.Context, _ func(retriever.Changes)) error {
	<-ctx.Done()
	return nil
}

// Search answers over the fleet; each item's file is named with its run
// first (RUN/episode-N/agent/file), so that results name their runs.
func (e *fleetEngine) Search(ctx context.Context, req retriever.Request) (retriever.Result, error) {
	res, err := e.searcher.Search(ctx, fleet.Request{Request: req, Runs: e.runs})
	if err != nil {
		return retriever.Result{}, err
	}
	out := retriever.Result{Items: make([]retriever.Item, 0, len(res.Items)), Hidden: res.Hidden, Notices: res.Notices}
	for _, it := range res.Items {
		item := it.Item
		item.File = it.Run + "/" + it.File
		out.Items = append(out.Items, item)
	}
	return out, nil
}

func (e *fleetEngine) Records(context.Context, retriever.RecordsRequest) (retriever.RecordsResult, error) {
	return retriever.RecordsResult{}, errNotInFleet
}

func (e *fleetEngine) ReadLines(context.Context, retriever.ReadRequest) (retriever.Lines, error) {
	return retriever.Lines{}, errNotInFleet
}

// Info names the store as the root and lists the agents of the runs searched.
func (e *fleetEngine) Info(ctx context.Context) (retriever.Info, error) {
	agents, err := e.searcher.Store.Agents(ctx, e.runs)
	if err != nil {
		return retriever.Info{}, err
	}
	return retriever.Info{Root: e.url, Agents: agents, Episodes: []retriever.EpisodeInfo{}, Indexing: retriever.IndexingInfo{Done: true}}, nil
}

// runMCPFleet is `runls mcp --fleet URL [--run ID]...`.
func runMCPFleet(ctx context.Context, ff *fleetFlags, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(pos) != 0 {
		return usageError(stderr, "mcp --fleet takes no run folder: it searches the runs shipped to the store")
	}
	st, err := fleet.NewVictoriaLogs(ff.url)
	if err != nil {
		return usageError(stderr, "mcp: %v", err)
	}
	st.AllowPartial = ff.partial
	eng := &fleetEngine{url: ff.url, runs: ff.runs, searcher: &fleet.Searcher{Store: st, MaxCandidates: ff.maxCandidates}}
	srv, err := mcpserver.New(eng, mcpserver.Options{Version: buildVersion(), Logger: cliLogger(stderr)})
	if err != nil {
		return fail(stderr, err)
	}
	if err := srv.Run(ctx, &mcpserver.Stdio{In: stdin, Out: stdout}); err != nil {
		return fail(stderr, err)
	}
	return 0
}
