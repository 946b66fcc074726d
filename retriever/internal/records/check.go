package records

import "runls/recordformat"

// The table keeps no text: a record read back from its file is checked
// against it before it is given, so that a file rewritten since its update
// is caught (the retriever then answers that the file changed).

// kindOf is the kind of a record whose first line is head.
func kindOf(head recordformat.Line) int {
	switch head.Kind {
	case recordformat.Unfielded:
		return KindUnfielded
	case recordformat.BeforeFirst:
		return KindBeforeFirst
	case recordformat.Foreign:
		return KindForeign
	}
	return KindFielded
}

// Matches reports whether a record read back, its first line first parsed
// as head, is record k of t: the same kind, level and time (a foreign
// log's as its layout read it).
func (t *Table) Matches(k int, head recordformat.Line, first []byte) bool {
	kind, m := kindOf(head), t.Meta(k)
	key := head.Time
	if kind == KindFielded || kind == KindUnfielded {
		key = recordformat.TimeKey(first)
	}
	return kind == MetaKind(m) && head.Level == MetaLevel(m) && (kind == KindBeforeFirst || key == t.Time(k))
}
