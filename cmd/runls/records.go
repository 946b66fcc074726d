package main

import (
	"bufio"
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

	"runls/retriever"
)

const recordsUsage = `usage: runls records [flags] RUN_FOLDER episode-N

Lists the records of the episode's .history and .log files in time order, whole
(stack traces and all), across agents: the first page, one record a block, a
header line path:line: time level agent [conversation], then the record's lines
as written. Exit status: 0 records listed, 1 none, 2 an error.

flags (also after RUN_FOLDER and episode-N):`

// runRecords is `runls records` (spec §13): the first page of run/records,
// as text or as the run/records result (--json); exit status as runls
// search.
func runRecords(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("records", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var req retriever.RecordsRequest
	fs.StringVar(&req.Agent, "agent", "", "only the files of agent `A`")
	fs.StringVar(&req.Conversation, "conversation", "", "only the records written in conversation `C` (- : outside any)")
	fs.StringVar(&req.MinLevel, "min-level", "", "only records with a level at or above `L` (TRACE, DEBUG, INFO, WARN, ERROR); records without one (history records) are left out")
	fs.StringVar(&req.From, "from", "", "only records at time `T` or later (yyyy-MM-dd HH:mm:ss, to the second)")
	fs.StringVar(&req.To, "to", "", "only records at time `T` or earlier (yyyy-MM-dd HH:mm:ss, to the second)")
	limit := fs.String("limit", "", "at most `N` records (1 to 10000; default 1000)")
	fs.StringVar(&req.Cursor, "cursor", "", "the page after the one that gave cursor `C`, or before it for a previousCursor (--json gives them)")
	at := fs.String("at", "", "the page that holds the record at `PATH:LINE` (PATH relative to the run folder, LINE 1-based), starting about half a page before it")
	mask := fs.Bool("mask", false, "hide paths outside the run folder and credentials")
	asJSON := fs.Bool("json", false, "print the run/records result as JSON")
	cache := addCacheFlags(fs)
	use := usage{"runls records [flags] RUN_FOLDER episode-N", "records"}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printFlagHelp(stdout, recordsUsage, fs)
		return exitFound
	}
	if err != nil {
		return use.errorf(stderr, "%v", err)
	}
	if len(pos) != 2 {
		return use.errorf(stderr, "records needs a run folder and an episode (episode-N)")
	}
	req.Episode = pos[1]
	if *limit != "" {
		n, err := strconv.Atoi(*limit)
		if err != nil || n < 1 || n > retriever.MaxRecordsLimit {
			return use.errorf(stderr, "%v", retriever.RecordsLimitError(*limit))
		}
		req.Limit = n
	}
	if err := req.Validate(); err != nil {
		return use.errorf(stderr, "%v", err)
	}
	req.Lines = !*asJSON
	ix, err := openIndex(ctx, pos[0], *mask, "", cache, stderr)
	if err != nil {
		return use.fail(stderr, err)
	}
	defer ix.Close()
	if *at != "" {
		loc, err := atLocation(ix.Root(), *at)
		if err != nil {
			return use.errorf(stderr, "%v", err)
		}
		req.At = &loc
	}
	res, err := ix.Records(ctx, req)
	if err != nil {
		return use.fail(stderr, err)
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return use.fail(stderr, err)
		}
	} else {
		cwd, _ := os.Getwd()
		w := bufio.NewWriterSize(stdout, 64<<10)
		for _, r := range res.Records {
			writeRecord(w, cwd, r)
		}
		if err := w.Flush(); err != nil {
			return use.fail(stderr, err)
		}
		if res.PreviousCursor != nil {
			fmt.Fprintf(stderr, "runls: note: records come before these: add --cursor %s for the page before\n", *res.PreviousCursor)
		}
		if res.Cursor != nil {
			fmt.Fprintf(stderr, "runls: note: the list goes on after these %d records: add --cursor %s for the next page\n", len(res.Records), *res.Cursor)
		}
	}
	printNotices(stderr, ix.RecordsNotices(req))
	if len(res.Records) == 0 {
		return exitNotFound
	}
	return exitFound
}

// atLocation reads --at PATH:LINE: PATH relative to the run folder (spec
// §10), LINE 1-based.
func atLocation(root, at string) (retriever.Location, error) {
	bad := &retriever.FieldError{Field: "at", Value: at, Reason: "want PATH:LINE, PATH relative to the run folder, LINE from 1"}
	i := strings.LastIndexByte(at, ':')
	if i <= 0 {
		return retriever.Location{}, bad
	}
	line, err := strconv.Atoi(at[i+1:])
	rel := filepath.Clean(filepath.FromSlash(at[:i]))
	if err != nil || line < 1 || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return retriever.Location{}, bad
	}
	return retriever.Location{URI: retriever.FileURI(filepath.Join(root, rel)),
		Range: retriever.Range{Start: retriever.Position{Line: line - 1}, End: retriever.Position{Line: line - 1}}}, nil
}

// writeRecord writes one record's block: its header line, then its lines.
func writeRecord(w io.Writer, cwd string, r retriever.Record) {
	head := []string{fmt.Sprintf("%s:%d:", displayPath(cwd, r.Path), r.Location.Range.Start.Line+1)}
	if r.Time != nil {
		head = append(head, *r.Time)
	}
	if r.Level != nil {
		head = append(head, *r.Level)
	}
	head = append(head, r.Agent)
	if r.Conversation != nil {
		head = append(head, "["+*r.Conversation+"]")
	}
	fmt.Fprintln(w, strings.Join(head, " "))
	for _, l := range r.Lines {
		fmt.Fprintln(w, l)
	}
}

// parseInterspersed parses flags before, between and after the positional
// arguments (`runls records RUN episode-3 --conversation conv-1`); after
// "--" every argument is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// printFlagHelp writes a subcommand's help: its usage, then a line per flag.
func printFlagHelp(w io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprintln(w, usage)
	fs.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f) // name: the usage's `word`; none for a bool
		fmt.Fprintf(w, "  %-22s %s\n", strings.TrimSpace("--"+f.Name+" "+name), text)
	})
}
