package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"runls/masking"
	"runls/mcpserver"
)

// runMCP is `runls mcp` (spec §14): the run's evidence for agents, as an
// MCP server on stdin and stdout. The index is opened as `runls search`
// opens it. WARNs go to stderr, which MCP clients keep as the server's log.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mask := fs.Bool("mask", false, "")
	rules := fs.String("interpreter", "", "")
	cache := addCacheFlags(fs)
	ff := addFleetFlags(fs)
	// MCP clients' configurations put the arguments in any order
	// (["mcp", "/runs/r1", "--mask"]): flags stand before or after the run
	// folder (spec §14).
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = io.WriteString(stdout, usageText+"\n")
			return 0
		}
		return usageError(stderr, "mcp: %v", err)
	}
	if ff.url != "" {
		return runMCPFleet(ctx, ff, pos, stdin, stdout, stderr)
	}
	if len(pos) != 1 {
		return usageError(stderr, "mcp needs one run folder")
	}
	ix, err := openIndexFor(ctx, pos[0], *mask, *rules, cache, stderr, false)
	if err != nil {
		return fail(stderr, err)
	}
	defer ix.Close()
	opts := mcpserver.Options{Version: buildVersion(), Logger: cliLogger(stderr)}
	if *mask {
		opts.Masker = masking.HidingOutside(ix.Root())
	}
	srv, err := mcpserver.New(ix, opts)
	if err != nil {
		return fail(stderr, err)
	}
	if err := srv.Run(ctx, &mcpserver.Stdio{In: stdin, Out: stdout}); err != nil {
		return fail(stderr, err)
	}
	return 0
}
