package retriever

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// Diagnostics returns the format warnings of one record file (by absolute
// path), grouped as spec §9 says, from the file's record table (nothing is
// read): one unindented-continuation per record that has continuation lines
// without the indent, one unfielded-line per maximal run of unfielded
// records, or, for a file none of whose records has the conversation field,
// one Information over the whole file. The codes in leaveOut are left out
// (the editors' ignoreDiagnostics setting); the others are capped at max
// (0: the index's MaxDiagnosticsPerFile; Uncapped: none): when there are
// more, the first max-1, then one saying how many more there are (unless
// more-warnings is left out: then the first max).
//
// A restored file's columns found bad as they are read (a guarded view,
// search.go's viewed) give the diagnostics of the run indexed afresh; an
// error of that update gives none.
func (ix *Index) Diagnostics(path string, max int, leaveOut ...string) []Diagnostic {
	out, _ := viewed(context.Background(), ix, "making diagnostics", func() ([]Diagnostic, error) {
		return ix.diagnostics(path, max, leaveOut), nil
	})
	return out
}

func (ix *Index) diagnostics(path string, max int, leaveOut []string) []Diagnostic {
	switch {
	case max == Uncapped:
	case max <= 0:
		max = ix.maxDiags
	}
	fs := ix.recordFile(path)
	if fs == nil {
		return nil
	}
	if fs.Layout.Foreign() {
		return foreignDiagnostics(fs, max, leaveOut)
	}
	return fileDiagnostics(&ix.rb, fs, max, leaveOut)
}

// foreignDiagnostics is a foreign log's one diagnostic (spec §9): an
// Information over its first line naming the layout it was read in, and
// nothing per record.
func foreignDiagnostics(fs *corpus.File, max int, leaveOut []string) []Diagnostic {
	if max == 0 || slices.Contains(leaveOut, CodeForeignLayout) {
		return nil
	}
	return []Diagnostic{{
		Range:    Range{End: Position{Character: int(fs.FirstUnits)}},
		Severity: SeverityInformation, Code: CodeForeignLayout,
		Message: "read as a foreign log in the " + fs.Layout.String() + " layout (spec §2): its records are searched as notes, " +
			"with their times and levels, and are not checked for the run's own record format",
	}}
}

// recordFile returns the committed state of a record file of the run, by
// absolute path, or nil.
func (ix *Index) recordFile(path string) *corpus.File {
	rel, err := filepath.Rel(ix.root, path)
	if err != nil {
		return nil
	}
	ix.mu.RLock()
	fs := ix.state.Files[filepath.ToSlash(rel)]
	ix.mu.RUnlock()
	if fs == nil || !fs.Form.IsRecord() || fs.Binary {
		return nil
	}
	return fs
}

// fileDiagnostics words the warnings records.Warnings groups from the
// file's table, the codes in leaveOut left out; a span of continuation
// lines that is a stack trace is a Hint (spec §9, revision 3).
func fileDiagnostics(rb *readBack, fs *corpus.File, max int, leaveOut []string) []Diagnostic {
	if max == Uncapped {
		max = 0
	}
	leave := records.Leave{Unindented: slices.Contains(leaveOut, CodeUnindentedContinuation),
		Unfielded: slices.Contains(leaveOut, CodeUnfieldedLine), More: slices.Contains(leaveOut, CodeMore)}
	if _, t := fs.ColumnSizes(); t.Unwarned() {
		// Most files: a server publishes every record file's diagnostics
		// after a reopen, and a restored file's table is then not copied
		// out of the cache entry's mapping (internal/persist/inplace.go).
		return nil
	}
	lines, t := fs.ColumnsOnce() // a restored file's not kept: the server publishes every file's once
	traces := rb.stackTraces(fs, lines, records.ConsideredSpans(t, leave))
	ws := records.Warnings(t, max, leave, func(k int) bool { return traces[k].all })
	if len(ws) == 0 {
		return nil
	}
	out := make([]Diagnostic, len(ws))
	for i, w := range ws {
		d := Diagnostic{Range: Range{Start: Position{Line: int(w.StartLine)}, End: Position{Line: int(w.EndLine), Character: int(w.EndUnits)}},
			Severity: SeverityWarning}
		switch w.Kind {
		case records.WarnUnfielded:
			d.Code, d.Message = CodeUnfieldedLine, unfieldedMessage(w.N, fs.Episode())
		case records.WarnPredates:
			d.Severity, d.Code, d.Message = SeverityInformation, CodeUnfieldedLine, predatesMessage(w.N, fs.Episode())
		case records.WarnUnindented:
			d.Code, d.Message = CodeUnindentedContinuation, unindentedMessage(w.N)
		case records.WarnHint:
			d.Severity, d.Code, d.Message = SeverityHint, CodeUnindentedContinuation, stackTraceMessage(rb.exceptionOf(fs, lines, traces[w.Span]), w.N)
		case records.WarnMore:
			d.Code, d.Message = CodeMore, moreMessage(w.N)
		}
		out[i] = d
	}
	return out
}

// The messages say what the warning means for a search, in plain words.

func unindentedMessage(n int) string {
	return fmt.Sprintf("%s without the two-space indent (a stack trace, or text written before logback pattern 0.18.6): "+
		"read as part of this record, though such a line that starts like a record would begin a new one",
		plural(n, "continuation line", "continuation lines"))
}

// stackTraceMessage is a Hint's: the record's first exception line, then
// what the lines are.
func stackTraceMessage(exception string, n int) string {
	what := plural(n, "stack-trace line", "stack-trace lines") + " without the two-space indent, as logback writes them: " +
		"none can be read as a record, so nothing needs fixing"
	if exception == "" {
		return "a stack trace: " + what
	}
	return exception + " — " + what
}

func unfieldedMessage(n int, episode string) string {
	them := "them"
	if n == 1 {
		them = "it"
	}
	return fmt.Sprintf("%s without the conversation field (written before logback pattern 0.18.6): "+
		"not evidence while %s is the current episode (a search made there does not return %s, since it cannot tell "+
		"their conversation); searches from other episodes do return %s",
		plural(n, "record", "records"), episode, them, them)
}

func predatesMessage(n int, episode string) string {
	none := "its one record has none"
	if n > 1 {
		none = "none of its " + strconv.Itoa(n) + " records has one"
	}
	return fmt.Sprintf("this file predates the conversation field (logback pattern 0.18.6): %s, "+
		"and nothing in it needs fixing. A search whose current episode is %s does not return its records; "+
		"searches from other episodes do", none, episode)
}

func moreMessage(n int) string {
	return plural(n, "more format warning", "more format warnings") + " in this file (runls check lists them all)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
