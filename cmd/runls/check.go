package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"runls/retriever"
)

// checkCodes are the codes `runls check --code` takes, in the order a
// summary counts them.
var checkCodes = []string{retriever.CodeUnindentedContinuation, retriever.CodeUnfieldedLine, retriever.CodeForeignLayout}

// codeList is a repeatable --code flag.
type codeList map[string]bool

func (c codeList) String() string { return "" }

func (c codeList) Set(v string) error {
	for _, code := range checkCodes {
		if v == code {
			c[v] = true
			return nil
		}
	}
	return &retriever.FieldError{Field: "code", Value: v, Reason: "want " + strings.Join(checkCodes, " or ")}
}

// runCheck is `runls check` (spec §10): the diagnostics of every record
// file, without a cap, files in location order; or with --summary one count
// line per file and a total. Exit status 1 when a warning is left (an
// Information alone is none), 2 on an error.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	codes := codeList{}
	fs.Var(codes, "code", "keep only the warnings of `CODE` (unindented-continuation, unfielded-line, foreign-layout); repeatable")
	summary := fs.Bool("summary", false, "one line of counts a file, then a total, instead of the warnings")
	cache := addCacheFlags(fs)
	use := usage{checkSynopsis, "check"}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if helpRequested(err, fs, checkSynopsis, checkAbout, stdout) {
			return exitFound
		}
		return use.errorf(stderr, "%v", err)
	}
	if len(pos) != 1 {
		return use.errorf(stderr, "check needs one run folder")
	}
	ix, err := openIndex(ctx, pos[0], false, "", cache, stderr)
	if err != nil {
		return use.fail(stderr, err)
	}
	defer ix.Close()
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return use.fail(stderr, err)
	}
	cwd, _ := os.Getwd()
	warned := false
	total := map[string]int{}
	files := 0
	for _, path := range ix.RecordFiles() {
		counts := map[string]int{}
		for _, d := range ix.Diagnostics(path, retriever.Uncapped) {
			if len(codes) > 0 && !codes[d.Code] {
				continue
			}
			counts[d.Code]++
			warned = warned || d.Severity == retriever.SeverityWarning
			if !*summary {
				kind := severityNames[d.Severity]
				// Every diagnostic starts at the start of a line: column 1.
				fmt.Fprintf(stdout, "%s:%d:%d: %s: %s [%s]\n", displayPath(cwd, path), d.Range.Start.Line+1, d.Range.Start.Character+1, kind, d.Message, d.Code)
			}
		}
		if len(counts) == 0 {
			continue
		}
		files++
		for code, n := range counts {
			total[code] += n
		}
		if *summary {
			fmt.Fprintf(stdout, "%s: %s\n", displayPath(cwd, path), countList(counts))
		}
	}
	if *summary && files > 0 {
		fmt.Fprintf(stdout, "%d files: %s\n", files, countList(total))
	}
	if warned {
		return exitNotFound
	}
	return exitFound
}

const (
	checkSynopsis = "runls check [flags] RUN_FOLDER"
	checkAbout    = `Prints the format warnings of every record file of the run, grouped as the
editors show them, with no cap, as path:line:column: warning: message [code]
(info: for a file written before the conversation field; hint: for a stack
trace, which needs no fixing). Flags may come before or after the run folder.
Exit status: 0 no warning (infos and hints aside), 1 a warning, 2 error.`
)

// severityNames are the words check prints for each severity (spec §10).
var severityNames = map[retriever.Severity]string{
	retriever.SeverityWarning:     "warning",
	retriever.SeverityInformation: "info",
	retriever.SeverityHint:        "hint",
}

// countList is "N unindented-continuation, M unfielded-line", codes counted
// zero times left out.
func countList(counts map[string]int) string {
	var parts []string
	for _, code := range checkCodes {
		if n := counts[code]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+code)
		}
	}
	return strings.Join(parts, ", ")
}
