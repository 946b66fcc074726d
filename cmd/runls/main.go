// Command runls indexes the files AI agents write during a run and answers
// BM25-ranked searches for evidence: as a language server (`runls serve`, the
// default), on the command line (`runls search`, `runls check`, `runls
// records`) and as an MCP server for agents (`runls mcp`).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
)

const usageText = `usage:
  runls [serve] [--stdio] [--log-file FILE] [--log-level LEVEL] [cache flags]
  runls search [--agent A] [--episode episode-N] [--conversation C] [--all-conversations]
               [--scope run|episode] [--from T] [--to T] [--top-k K] [--mask]
               [--interpreter rules.json] [--json]
               RUN_FOLDER QUERY...
  runls check [--code CODE]... [--summary] RUN_FOLDER
  runls records [--agent A] [--conversation C] [--min-level L] [--from T] [--to T]
                [--at PATH:LINE] [--limit N] [--cursor C] [--mask] [--json] RUN_FOLDER episode-N
  runls failures [--episode episode-N] [--agent A] [--min-level L] [--mask] [--json] RUN_FOLDER
  runls search --fleet URL [--run ID]... [--partial] [search flags] QUERY...
  runls ship [--run-id ID] [--follow] [--no-mask] [--interpreter rules.json] RUN_FOLDER... --to URL
  runls mcp [--mask] [--interpreter rules.json] RUN_FOLDER
  runls cache list|clear [--cache-dir DIR] [RUN_FOLDER]
  runls version
serve, search, check, records, failures and mcp take the cache flags
  [--no-cache] [--cache-dir DIR] [--cache-max SIZE] (spec §15).
Flags may come before or after the arguments; -- ends them.
runls SUBCOMMAND --help describes a subcommand's flags.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runServe(ctx, nil, stdin, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdin, stdout, stderr)
	case "search":
		return runSearch(ctx, args[1:], stdout, stderr)
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "records":
		return runRecords(ctx, args[1:], stdout, stderr)
	case "failures":
		return runFailures(ctx, args[1:], stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], stdin, stdout, stderr)
	case "ship":
		return runShip(ctx, args[1:], stdout, stderr)
	case "cache":
		return runCache(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		_, _ = io.WriteString(stdout, "runls "+buildVersion()+"\n")
		return 0
	case "help", "--help", "-h", "-help":
		_, _ = io.WriteString(stdout, usageText+"\n")
		return 0
	}
	if len(args[0]) > 0 && args[0][0] == '-' {
		return runServe(ctx, args, stdin, stdout, stderr) // `runls --stdio`
	}
	return usageError(stderr, "unknown subcommand %q", args[0])
}
