package retriever

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
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
func (ix *Index) Diagnostics(path string, max int, leaveOut ...string) []Diagnostic {
	switch {
	case max == Uncapped:
	case max <= 0:
		max = ix.maxDiags
	}
	fs := ix.recordFile(path)
	if fs == nil {
		return nil
	}
	if fs.layout.Foreign() {
		return foreignDiagnostics(fs, max, leaveOut)
	}
	return ix.fileDiagnostics(fs, max, leaveOut)
}

// foreignDiagnostics is a foreign log's one diagnostic (spec §9): an
// Information over its first line naming the layout it was read in, and
// nothing per record.
func foreignDiagnostics(fs *fileState, max int, leaveOut []string) []Diagnostic {
	if max == 0 || slices.Contains(leaveOut, CodeForeignLayout) {
		return nil
	}
	return []Diagnostic{{
		Range:    Range{End: Position{Character: int(fs.firstUnits)}},
		Severity: SeverityInformation, Code: CodeForeignLayout,
		Message: "read as a foreign log in the " + fs.layout.String() + " layout (spec §2): its records are searched as notes, " +
			"with their times and levels, and are not checked for the run's own record format",
	}}
}

// recordFile returns the committed state of a record file of the run, by
// absolute path, or nil.
func (ix *Index) recordFile(path string) *fileState {
	rel, err := filepath.Rel(ix.root, path)
	if err != nil {
		return nil
	}
	ix.mu.RLock()
	fs := ix.files[filepath.ToSlash(rel)]
	ix.mu.RUnlock()
	if fs == nil || !fs.form.IsRecord() || fs.binary {
		return nil
	}
	return fs
}

func (ix *Index) fileDiagnostics(fs *fileState, max int, leaveOut []string) []Diagnostic {
	t := fs.records()
	spans, runs := t.allSpans(), t.allRuns()
	if slices.Contains(leaveOut, CodeUnindentedContinuation) {
		spans = nil
	}
	if slices.Contains(leaveOut, CodeUnfieldedLine) {
		runs = nil
	}
	if len(spans)+len(runs) == 0 {
		return nil
	}
	// A stack trace's span is a Hint (spec §9, revision 3): it neither counts
	// against the cap nor is left out by it.
	traces := ix.stackTraces(fs, spans)
	var hints []Diagnostic
	var warnSpans []unindentedSpan
	for i, sp := range spans {
		if traces[i].all {
			hints = append(hints, Diagnostic{
				Range:    Range{Start: Position{Line: int(sp.first)}, End: Position{Line: int(sp.last), Character: int(sp.lastUnits)}},
				Severity: SeverityHint, Code: CodeUnindentedContinuation,
				Message: stackTraceMessage(traces[i].exception, int(sp.count)),
			})
		} else {
			warnSpans = append(warnSpans, sp)
		}
	}
	spans = warnSpans
	total := len(spans) + len(runs)
	whole := !t.anyFielded() // then runs holds one run: every record
	shown := total
	if max != Uncapped && total > max {
		shown = max - 1
		if slices.Contains(leaveOut, CodeMore) {
			shown = max
		}
	}
	out := make([]Diagnostic, 0, min(total, shown+1)+len(hints))
	si, ri := 0, 0
	next := func() Diagnostic {
		// In line order; a run starts at a record's first line, a span after it.
		if ri < len(runs) && (si == len(spans) || t.recLine(int(runs[ri].first)) < spans[si].first) {
			r := runs[ri]
			ri++
			d := Diagnostic{
				Range: Range{Start: Position{Line: int(t.recLine(int(r.first)))},
					End: Position{Line: int(r.endLine), Character: int(r.endUnits)}},
				Severity: SeverityWarning, Code: CodeUnfieldedLine,
				Message: unfieldedMessage(int(r.last-r.first+1), fs.episode),
			}
			if whole {
				d.Severity, d.Message = SeverityInformation, predatesMessage(int(r.last-r.first+1), fs.episode)
			}
			return d
		}
		sp := spans[si]
		si++
		return Diagnostic{
			Range:    Range{Start: Position{Line: int(sp.first)}, End: Position{Line: int(sp.last), Character: int(sp.lastUnits)}},
			Severity: SeverityWarning, Code: CodeUnindentedContinuation,
			Message: unindentedMessage(int(sp.count)),
		}
	}
	for len(out) < shown {
		out = append(out, next())
	}
	if shown < total && !slices.Contains(leaveOut, CodeMore) {
		at := next().Range.Start
		out = append(out, Diagnostic{Range: Range{Start: at, End: at}, Severity: SeverityWarning,
			Code: CodeMore, Message: moreMessage(total - shown)})
	}
	if len(hints) == 0 {
		return out
	}
	// In line order, the Hints among the others (more-warnings at the start
	// of the first warning not shown, before a Hint that starts there).
	out = append(out, hints...)
	slices.SortStableFunc(out, func(a, b Diagnostic) int { return a.Range.Start.Line - b.Range.Start.Line })
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
