package records

import (
	"errors"
	"fmt"
)

// The table's own codec: the cache (the persist package) writes the tables
// of a run's files as columns laid end to end, each one aligned section,
// and a table's state besides its columns in the file's fixed record; a
// table read back points its columns into the bytes they are read from
// (len == cap: an append copies).

// Columns are the columns of several tables laid end to end.
type Columns struct {
	Line, Sec []uint32
	Ms        []uint16
	Conv      []uint32
	Meta      []uint8
	Over      []TimeOver
	Spans     []Span
	Runs      []Run
	Descents  []uint32
}

// Counts is one table's share of Columns, or, while cutting, how much of
// them was cut.
type Counts struct {
	Recs, Over, Spans, Runs, Descents uint32
}

// Saved is a table's state besides its columns.
type Saved struct {
	Open               Run
	HasOpen, Fielded   bool
	End, LastUnits     uint32
	LastKey            int64
	HasPend            bool
	PendLine, PendConv uint32
	PendTime           int64
	PendSpan           Span
	PendHasSpan        bool
	PendMeta           uint32
	Lines, EndUnits    uint32
}

// Append lays t's columns after c's and returns its counts and state.
func (c *Columns) Append(t *Table) (Counts, Saved) {
	c.Line, c.Sec, c.Ms = append(c.Line, t.line...), append(c.Sec, t.sec...), append(c.Ms, t.ms...)
	c.Conv, c.Meta = append(c.Conv, t.conv...), append(c.Meta, t.meta...)
	c.Over, c.Spans, c.Runs = append(c.Over, t.over...), append(c.Spans, t.spans...), append(c.Runs, t.runs...)
	c.Descents = append(c.Descents, t.descents...)
	n := Counts{Recs: uint32(len(t.line)), Over: uint32(len(t.over)), Spans: uint32(len(t.spans)), Runs: uint32(len(t.runs)),
		Descents: uint32(len(t.descents))}
	s := Saved{Open: t.open, HasOpen: t.hasOpen, Fielded: t.fielded, End: t.end, LastUnits: t.lastUnits, LastKey: t.lastKey,
		HasPend: t.hasPend, PendLine: t.pend.line, PendConv: t.pend.conv, PendTime: t.pend.time, PendSpan: t.pend.span,
		PendHasSpan: t.pend.hasSpan, PendMeta: uint32(t.pend.meta), Lines: t.lines, EndUnits: t.endUnits}
	return n, s
}

// CheckLengths reports whether the record columns (one entry a record) are
// of one length.
func (c *Columns) CheckLengths() error {
	if n := len(c.Line); len(c.Sec) != n || len(c.Ms) != n || len(c.Conv) != n || len(c.Meta) != n {
		return errors.New("the record columns' lengths")
	}
	return nil
}

// Cut cuts the next table from c into t, of counts n and state s, at *at
// (what was cut before it), checking every value a lookup indexes with
// against what it names; convs is how many conversation ids there are. Its
// columns point into c's. t is the caller's, so that a table checked and
// then not kept (a note's, which must be empty) costs no allocation.
func (c *Columns) Cut(t *Table, at *Counts, n Counts, s Saved, convs int) error {
	if err := c.CutUnchecked(t, at, n, s); err != nil {
		return err
	}
	return t.CheckValues(convs)
}

// CutUnchecked is Cut without the checks of the columns' values: it reads
// c's lengths only, not its values, for a caller that checks them at the
// table's first use (CheckValues) and must not read them before (columns
// in a mapping, checked by range at first use).
func (c *Columns) CutUnchecked(t *Table, at *Counts, n Counts, s Saved) error {
	*t = Table{}
	lo, hi, ok := take(&at.Recs, n.Recs, len(c.Line))
	if !ok {
		return errors.New("record columns")
	}
	t.line, t.sec, t.ms = clip(c.Line[lo:hi]), clip(c.Sec[lo:hi]), clip(c.Ms[lo:hi])
	t.conv, t.meta = clip(c.Conv[lo:hi]), clip(c.Meta[lo:hi])
	if lo, hi, ok = take(&at.Over, n.Over, len(c.Over)); !ok {
		return errors.New("record columns")
	}
	t.over = clip(c.Over[lo:hi])
	if lo, hi, ok = take(&at.Spans, n.Spans, len(c.Spans)); !ok {
		return errors.New("record columns")
	}
	t.spans = clip(c.Spans[lo:hi])
	if lo, hi, ok = take(&at.Runs, n.Runs, len(c.Runs)); !ok {
		return errors.New("record columns")
	}
	t.runs = clip(c.Runs[lo:hi])
	if lo, hi, ok = take(&at.Descents, n.Descents, len(c.Descents)); !ok {
		return errors.New("record columns")
	}
	t.descents = clip(c.Descents[lo:hi])
	t.open, t.hasOpen, t.fielded = s.Open, s.HasOpen, s.Fielded
	t.end, t.lastUnits, t.lastKey = s.End, s.LastUnits, s.LastKey
	t.hasPend, t.lines, t.endUnits = s.HasPend, s.Lines, s.EndUnits
	if s.PendMeta > 0xff {
		return errors.New("pending record's meta")
	}
	t.pend = pendingRecord{line: s.PendLine, time: s.PendTime, conv: s.PendConv, meta: uint8(s.PendMeta),
		span: s.PendSpan, hasSpan: s.PendHasSpan}
	return nil
}

// CheckValues checks every value of a table read back that a lookup
// indexes with against what it names (Cut); convs is how many
// conversation ids there are.
func (t *Table) CheckValues(convs int) error {
	recs := uint32(len(t.line))
	for _, id := range t.conv {
		if int(id) >= convs {
			return fmt.Errorf("record conversation %d", id)
		}
	}
	for k, o := range t.over {
		if o.rec >= recs || k > 0 && o.rec <= t.over[k-1].rec {
			return fmt.Errorf("time overflow %d", k)
		}
	}
	// A run may end at the pending record, numbered recs (Runs).
	for _, run := range t.runs {
		if run.First > run.Last || run.Last > recs {
			return fmt.Errorf("unfielded run %v", run)
		}
	}
	if run := t.open; run.First > run.Last || run.Last > recs {
		return fmt.Errorf("unfielded run %v", run)
	}
	for _, d := range t.descents {
		if d >= recs {
			return fmt.Errorf("descent %d", d)
		}
	}
	return nil
}

// Columns are t's columns, as one table's share of Columns (no copy).
func (t *Table) Columns() Columns {
	return Columns{Line: t.line, Sec: t.sec, Ms: t.ms, Conv: t.conv, Meta: t.meta, Over: t.over, Spans: t.spans, Runs: t.runs,
		Descents: t.descents}
}

// Own returns t with columns in memory of their own (len == cap: an append
// copies): a table read back from a mapping, made the heap's at its first
// use.
func (t *Table) Own() *Table {
	o := *t
	o.line, o.sec, o.ms, o.conv, o.meta = own(t.line), own(t.sec), own(t.ms), own(t.conv), own(t.meta)
	o.over, o.spans, o.runs, o.descents = own(t.over), own(t.spans), own(t.runs), own(t.descents)
	return &o
}

// own copies s into memory of its own, len == cap; nil for an empty s.
func own[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// Whole reports whether the tables cut, at, took every value of c.
func (c *Columns) Whole(at Counts) bool {
	return int(at.Recs) == len(c.Line) && int(at.Over) == len(c.Over) && int(at.Spans) == len(c.Spans) &&
		int(at.Runs) == len(c.Runs) && int(at.Descents) == len(c.Descents)
}

// take cuts the next n values of a column of total values, at *at.
func take(at *uint32, n uint32, total int) (lo, hi int, ok bool) {
	lo, hi = int(*at), int(*at)+int(n)
	*at = uint32(hi)
	return lo, hi, hi <= total
}

// clip gives s with no room to append into: a slice into a mapping.
func clip[T any](s []T) []T { return s[:len(s):len(s)] }
