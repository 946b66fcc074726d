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
	"time"
	"unicode/utf8"

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
	fs.StringVar(&req.From, "from", "", "only records at time `T` or later (yyyy-MM-dd HH:mm:ss, to the second); notes are left out")
	fs.StringVar(&req.To, "to", "", "only records at time `T` or earlier (yyyy-MM-dd HH:mm:ss, to the second); notes are left out")
	topK := fs.String("top-k", "", "at most `K` pieces, 1 to 1000 (default 5)")
	mask := fs.Bool("mask", false, "hide local paths outside the run and credentials before indexing")
	rules := fs.String("interpreter", "", "record interpreter `rules.json` (told/said/leftOut rules)")
	asJSON := fs.Bool("json", false, "print the run/search result as JSON (UTF-16 ranges, hidden, notices)")
	full := fs.Bool("full", false, "print whole pieces; without it a piece wider than the terminal (200 columns when not one) is a window around its first match")
	cache := addCacheFlags(fs)
	ff := addFleetFlags(fs)
	use := usage{searchSynopsis, "search"}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if helpRequested(err, fs, searchSynopsis, searchAbout, stdout) {
			return exitFound
		}
		return use.errorf(stderr, "%v", err)
	}
	if ff.url != "" {
		return searchFleet(ctx, ff, use, req, *topK, pos, *asJSON, stdout, stderr)
	}
	if len(pos) < 2 {
		return use.errorf(stderr, "search needs a run folder and a query")
	}
	if *topK != "" {
		k, err := strconv.Atoi(*topK)
		if err != nil || k < 1 || k > retriever.MaxTopK {
			return use.errorf(stderr, "%v", retriever.TopKError(*topK))
		}
		req.TopK = k
	}
	if err := req.Validate(); err != nil {
		return use.errorf(stderr, "%v", err)
	}
	req.Query = strings.Join(pos[1:], " ")
	if stop := startCPUProfile(cliLogger(stderr)); stop != nil {
		defer stop()
	}
	defer writeHeapProfile(cliLogger(stderr))
	var ix *retriever.Index
	if ff.partial {
		ix, err = openRunFolder(ctx, pos[0], *mask, *rules, cache, stderr, true)
	} else {
		ix, err = openIndex(ctx, pos[0], *mask, *rules, cache, stderr)
	}
	if err != nil {
		return use.fail(stderr, err)
	}
	// Open until the answer is written: its text may be the entry's mapped
	// pages.
	defer ix.Close()
	var res retriever.Result
	if ff.partial {
		res, err = searchPartial(ctx, ix, req)
	} else {
		res, err = ix.Search(ctx, req)
	}
	if err != nil {
		return use.fail(stderr, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			return use.fail(stderr, err)
		}
	} else {
		cwd, _ := os.Getwd()
		cols, terminal := outputColumns(stdout)
		for _, it := range res.Items {
			prefix := fmt.Sprintf("%s:%d:%d: ", displayPath(cwd, it.Path), it.Location.Range.Start.Line+1, it.ByteStart+1)
			text := it.Text
			if !*full {
				width := cols
				if terminal {
					width = max(minWindow, cols-utf8.RuneCountInString(prefix))
				}
				text = pieceWindow(text, it.Matches, width)
			}
			fmt.Fprintf(stdout, "%s%s\n", prefix, text)
		}
		printNotes(stderr, req, res)
	}
	if len(res.Items) == 0 {
		return exitNotFound
	}
	return exitFound
}

// searchPartial answers req (--partial) once the run is indexed or its
// grace has passed (ix.AnswerGrace: retriever.PartialGrace, shorter for an
// index restored from its cache entry), whichever comes first: from what is
// indexed so far, with the indexing notice, while the first index is
// still being built. The indexing is then stopped, before ix is closed; the
// cache entry keeps only what a finished index would write (none of a
// first one).
func searchPartial(ctx context.Context, ix *retriever.Index, req retriever.Request) (retriever.Result, error) {
	ictx, stop := context.WithCancel(ctx)
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		// An error here is the search's too: a search made after it
		// updates the index itself and returns the error.
		_, _ = ix.Refresh(ictx, nil)
	}()
	defer func() {
		stop()
		<-indexed // before Close
	}()
	t := time.NewTimer(ix.AnswerGrace())
	defer t.Stop()
	select {
	case <-indexed:
		return ix.Search(ctx, req)
	case <-t.C:
		return ix.SearchPartial(ctx, req)
	case <-ctx.Done():
		return retriever.Result{}, ctx.Err()
	}
}

const (
	searchSynopsis = "runls search [flags] RUN_FOLDER QUERY...\n       runls search --fleet URL [--run ID]... [flags] QUERY..."
	searchAbout    = `Prints the run's evidence for QUERY, ranked by BM25, one piece a line as
path:line:column: text. After the results, stderr says what the filters hid
and names request values the run does not hold (lines "runls: note: ").
Flags may come before, between or after the arguments; after -- every
argument is a query word. Exit status: 0 found, 1 nothing found, 2 error.`
)

// openIndex opens a run folder with the command line's options and indexes
// it (with progress on a terminal); WARNs go to stderr, one line each.
func openIndex(ctx context.Context, root string, mask bool, rulesFile string, cache *cacheFlags, stderr io.Writer) (*retriever.Index, error) {
	return openIndexFor(ctx, root, mask, rulesFile, cache, stderr, true)
}

// openIndexFor is openIndex; oneShot says the command answers and exits
// (retriever.Options.OneShot), which a server (runls mcp) does not.
func openIndexFor(ctx context.Context, root string, mask bool, rulesFile string, cache *cacheFlags, stderr io.Writer, oneShot bool) (*retriever.Index, error) {
	ix, err := openRunFolder(ctx, root, mask, rulesFile, cache, stderr, oneShot)
	if err != nil {
		return nil, err
	}
	if err := indexWithProgress(ctx, ix, stderr); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// openRunFolder opens a run folder with the command line's options, reading no
// file yet.
func openRunFolder(ctx context.Context, root string, mask bool, rulesFile string, cache *cacheFlags, stderr io.Writer, oneShot bool) (*retriever.Index, error) {
	opts := retriever.Options{Root: root, Logger: cliLogger(stderr), BoundMemory: true, OneShot: oneShot}
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

// displayPath is path relative to the current folder where that is shorter.
func displayPath(cwd, path string) string {
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
			return rel
		}
	}
	return path
}

// usage is one subcommand's synopsis and name, for its usage errors.
type usage struct{ synopsis, name string }

// errorf reports a bad use of the subcommand: the error in one line, then
// its usage alone (spec §10), and exits 2.
func (u usage) errorf(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "runls: "+format+"\n", a...)
	fmt.Fprintf(stderr, "usage: %s\nrunls %s --help lists the flags.\n", u.synopsis, u.name)
	return exitError
}

// fail reports an error: a bad value (a *retriever.FieldError) as a usage
// error, anything else in one line; it exits 2.
func (u usage) fail(stderr io.Writer, err error) int {
	var fe *retriever.FieldError
	if errors.As(err, &fe) {
		return u.errorf(stderr, "%v", err)
	}
	fmt.Fprintf(stderr, "runls: %v\n", err)
	return exitError
}

// usageError reports a bad use of runls itself (an unknown subcommand) with
// every subcommand's usage.
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
