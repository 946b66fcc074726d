package records

// Outline runs and folds (spec §11), from the table alone.

// NewRun reports whether record i starts a conversation run: a maximal run
// of consecutive records with the same conversation field, unfielded
// records forming runs of their own.
func (t *Table) NewRun(i int) bool {
	return i == 0 || t.Conv(i) != t.Conv(i-1) || t.Unfielded(i) != t.Unfielded(i-1)
}

// Fold is a stretch of lines an editor can fold, first to last.
type Fold struct {
	First, Last uint32
}

// Folds returns the folds of t: one per record of more than one line, one
// per conversation run of more than one record, in order of their first
// line, the longer first.
func Folds(t *Table) []Fold {
	n := t.Len()
	out := make([]Fold, 0, n/4)
	runEnd := 0 // the record after the current run
	for i := 0; i < n; i++ {
		if i == runEnd {
			runEnd = i + 1
			for runEnd < n && !t.NewRun(runEnd) {
				runEnd++
			}
			if runEnd-i > 1 {
				out = append(out, Fold{First: t.Line(i), Last: t.Last(runEnd - 1)})
			}
		}
		if first, last := t.Line(i), t.Last(i); last > first {
			out = append(out, Fold{First: first, Last: last})
		}
	}
	return out
}
