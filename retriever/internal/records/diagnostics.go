package records

import "slices"

// The grouping of a record file's format warnings (spec §9), from its
// table alone: one per record that has continuation lines without the
// indent, one per maximal run of unfielded records, or, for a file none of
// whose records has the conversation field, one over the whole file. The
// retriever words them.

// Kinds of warnings.
const (
	WarnUnindented = iota // continuation lines without the indent: N lines
	WarnUnfielded         // a run of N unfielded records
	WarnPredates          // the whole file, none of its N records fielded
	WarnMore              // N more warnings past the cap, at the next one's start
	WarnHint              // continuation lines that are a stack trace: N lines, Span its index in Spans
)

// Warning is one grouped warning: lines StartLine to EndLine, the last
// EndUnits UTF-16 units long (a WarnMore is empty, at StartLine).
type Warning struct {
	Kind               int
	StartLine, EndLine uint32
	EndUnits           uint32
	N                  int
	Span               int // a WarnHint's span, by its index in the spans considered
}

// Leave says which warnings are left out: those of continuation lines,
// those of unfielded records, the one that counts the rest past the cap.
type Leave struct {
	Unindented, Unfielded, More bool
}

// ConsideredSpans are the spans Warnings looks at: t.Spans(), unless they
// are left out.
func ConsideredSpans(t *Table, leave Leave) []Span {
	if leave.Unindented {
		return nil
	}
	return t.Spans()
}

// Warnings returns t's warnings in line order but those left out, at most
// max of them (0: no cap): when there are more, the first max-1, then one
// WarnMore (unless it is left out: then the first max). A span of
// ConsideredSpans for which hint is true is a WarnHint instead (a stack
// trace, spec §9): it neither counts against the cap nor is left out by it.
func Warnings(t *Table, max int, leave Leave, hint func(k int) bool) []Warning {
	all, runs := ConsideredSpans(t, leave), t.Runs()
	if leave.Unfielded {
		runs = nil
	}
	if len(all)+len(runs) == 0 {
		return nil
	}
	var hints []Warning
	spans := all[:0:0]
	for k, sp := range all {
		if hint != nil && hint(k) {
			hints = append(hints, Warning{Kind: WarnHint, StartLine: sp.First, EndLine: sp.Last, EndUnits: sp.LastUnits, N: int(sp.Count), Span: k})
		} else {
			spans = append(spans, sp)
		}
	}
	total := len(spans) + len(runs)
	whole := !t.AnyFielded() // then runs holds one run: every record
	shown := total
	if max > 0 && total > max {
		shown = max - 1
		if leave.More {
			shown = max
		}
	}
	out := make([]Warning, 0, min(total, shown+1)+len(hints))
	si, ri := 0, 0
	next := func() Warning {
		// In line order; a run starts at a record's first line, a span after it.
		if ri < len(runs) && (si == len(spans) || t.Line(int(runs[ri].First)) < spans[si].First) {
			r := runs[ri]
			ri++
			w := Warning{Kind: WarnUnfielded, StartLine: t.Line(int(r.First)), EndLine: r.EndLine, EndUnits: r.EndUnits,
				N: int(r.Last - r.First + 1)}
			if whole {
				w.Kind = WarnPredates
			}
			return w
		}
		sp := spans[si]
		si++
		return Warning{Kind: WarnUnindented, StartLine: sp.First, EndLine: sp.Last, EndUnits: sp.LastUnits, N: int(sp.Count)}
	}
	for len(out) < shown {
		out = append(out, next())
	}
	if shown < total && !leave.More {
		at := next().StartLine
		out = append(out, Warning{Kind: WarnMore, StartLine: at, EndLine: at, N: total - shown})
	}
	if len(hints) == 0 {
		return out
	}
	// In line order, the hints among the others (more-warnings at the start
	// of the first warning not shown, before a hint that starts there).
	out = append(out, hints...)
	slices.SortStableFunc(out, func(a, b Warning) int { return int(a.StartLine) - int(b.StartLine) })
	return out
}
