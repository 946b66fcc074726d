package records

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
)

// Warning is one grouped warning: lines StartLine to EndLine, the last
// EndUnits UTF-16 units long (a WarnMore is empty, at StartLine).
type Warning struct {
	Kind               int
	StartLine, EndLine uint32
	EndUnits           uint32
	N                  int
}

// Leave says which warnings are left out: those of continuation lines,
// those of unfielded records, the one that counts the rest past the cap.
type Leave struct {
	Unindented, Unfielded, More bool
}

// Warnings returns t's warnings in line order but those left out, at most
// max of them (0: no cap): when there are more, the first max-1, then one
// WarnMore (unless it is left out: then the first max).
func Warnings(t *Table, max int, leave Leave) []Warning {
	spans, runs := t.Spans(), t.Runs()
	if leave.Unindented {
		spans = nil
	}
	if leave.Unfielded {
		runs = nil
	}
	total := len(spans) + len(runs)
	if total == 0 {
		return nil
	}
	whole := !t.AnyFielded() // then runs holds one run: every record
	shown := total
	if max > 0 && total > max {
		shown = max - 1
		if leave.More {
			shown = max
		}
	}
	out := make([]Warning, 0, min(total, shown+1))
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
	return out
}
