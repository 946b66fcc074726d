package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"runls/masking"
	"runls/retriever"
)

// Exit codes, as grep and ripgrep have them.
const (
	exitFound    = 0
	exitNotFound = 1
	exitError    = 2
)

// runSearch is `runls search` (spec §10).
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var req retriever.Request
	fs.StringVar(&req.Agent, "agent", "", "search agent `A`'s files only (its folder's name); default: every agent")
	fs.StringVar(&req.Episode, "episode", "", "the current episode, `episode-N`; record files need it and --conversation")
	fs.StringVar(&req.Conversation, "conversation", "", "the current conversation id `C`; of the current episode, only its records and those outside any")
	fs.BoolVar(&req.AllConversations, "all-conversations", false, "records of the current episode from every conversation (with --episode and --conversation)")
	fs.StringVar(&req.Scope, "scope", "", "every episode or the current one only (`run|episode`; default run)")
	topK := fs.String("top-k", "", "at most `K` pieces, 1 to 1000 (default 5)")
	mask := fs.Bool("mask", false, "hide local paths outside the run and credentials before indexing")
	rules := fs.String("interpreter", "", "record interpreter `rules.json` (told/said/leftOut rules)")
	asJSON := fs.Bool("json", false, "print the run/search result as JSON (UTF-16 ranges, hidden, notices)")
	cache := addCacheFlags(fs)
	var ff fleetFlags
	fs.StringVar(&ff.url, "fleet", "", "search the runs shipped to the fleet store at `URL` (runls ship), not a run folder: every argument is the query")
	fs.Var(&ff.runs, "run", "with --fleet, search run `ID` only (repeatable; default every run)")
	fs.BoolVar(&ff.partial, "partial", false, "with --fleet, accept an answer for part of the store (a storage node down), with a notice")
	fs.IntVar(&ff.maxCandidates, "max-candidates", 0, "with --fleet, rank at most `N` records (default 20000)")
	if err := fs.Parse(args); err != nil {
		if helpRequested(err, fs, searchSynopsis, searchAbout, stdout) {
			return exitFound
		}
		return usageError(stderr, "%v", err)
	}
	if ff.url != "" {
		if err := setTopK(&req, *topK); err != nil {
			return usageError(stderr, "%v", err)
		}
		if err := req.Validate(); err != nil {
			return usageError(stderr, "%v", err)
		}
		return searchFleet(ctx, &ff, req, fs.Args(), *asJSON, stdout, stderr)
	}
	if fs.NArg() < 2 {
		return usageError(stderr, "search needs a run folder and a query")
	}
	if err := setTopK(&req, *topK); err != nil {
		return usageError(stderr, "%v", err)
	}
	if err := req.Validate(); err != nil {
		return usageError(stderr, "%v", err)
	}
	req.Query = strings.Join(fs.Args()[1:], " ")
	ix, err := openIndex(ctx, fs.Arg(0), *mask, *rules, cache, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer ix.Close()
	res, err := ix.Search(ctx, req)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			return fail(stderr, err)
		}
	} else {
		cwd, _ := os.Getwd()
		for _, it := range res.Items {
			fmt.Fprintf(stdout, "%s:%d:%d: %s\n", displayPath(cwd, it.Path), it.Location.Range.Start.Line+1, it.ByteStart+1, it.Text)
		}
		printNotes(stderr, req, res)
	}
	if len(res.Items) == 0 {
		return exitNotFound
	}
	return exitFound
}

// setTopK reads --top-k into req.
func setTopK(req *retriever.Request, topK string) error {
	if topK == "" {
		return nil
	}
	k, err := strconv.Atoi(topK)
	if err != nil || k < 1 || k > retriever.MaxTopK {
		return retriever.TopKError(topK)
	}
	req.TopK = k
	return nil
}

const (
	searchSynopsis = "runls search [flags] RUN_FOLDER QUERY...\n       runls search --fleet URL [--run ID]... [flags] QUERY..."
	searchAbout    = `Prints the run's evidence for QUERY, ranked by BM25, one piece a line as
path:line:column: text. After the results, stderr says what the filters hid
and names request values the run does not hold (lines "runls: note: ").
Exit status: 0 found, 1 nothing found, 2 error.`
)

// openIndex opens a run folder with the command line's options; WARNs go to
// stderr, one line each.
func openIndex(ctx context.Context, root string, mask bool, rulesFile string, cache *cacheFlags, stderr io.Writer) (*retriever.Index, error) {
	opts := retriever.Options{Root: root, Logger: cliLogger(stderr), BoundMemory: true}
	var err error
	if opts.Cache, err = cache.options(func(err error) { opts.Logger.Warn(err.Error()) }); err != nil {
		return nil, err
	}
	if rulesFile != "" {
		if opts.Interpreter, err = retriever.LoadInterpreter(rulesFile); err != nil {
			return nil, err
		}
	}
	if mask {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, fmt.Errorf("open run folder: %w", err)
		}
		opts.Masker = masking.HidingOutside(real)
	}
	return retriever.Open(ctx, opts)
}

func cliLogger(w io.Writer) *zap.Logger {
	cfg := zap.NewDevelopmentEncoderConfig()
	cfg.TimeKey, cfg.CallerKey, cfg.StacktraceKey = "", "", ""
	cfg.EncodeLevel = func(l zapcore.Level, enc zapcore.PrimitiveArrayEncoder) {
		enc.AppendString("runls: " + l.CapitalString())
	}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), zapcore.AddSync(w), zapcore.WarnLevel)
	return zap.New(core)
}

// displayPath is path relative to the current folder where that is shorter.
func displayPath(cwd, path string) string {
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
			return rel
		}
	}
	return path
}

func usageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "runls: "+format+"\n", a...)
	fmt.Fprintln(stderr, usageText)
	return exitError
}

func fail(stderr io.Writer, err error) int {
	var fe *retriever.FieldError
	if errors.As(err, &fe) {
		return usageError(stderr, "%v", err)
	}
	fmt.Fprintf(stderr, "runls: %v\n", err)
	return exitError
}
