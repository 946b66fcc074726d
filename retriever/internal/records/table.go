// Package records holds the record tables of a run's record files and every
// view made from them without reading a file: a table and its times
// (table.go, time.go), the time and level of the record under a line
// (item.go), the query of run/records with its cursor (query.go,
// cursor.go), the merge of a file's streams into a page (page.go) and the
// spans a page is read back in (spans.go), the grouping of format warnings
// (diagnostics.go), outline runs and folds (outline.go), the check of a
// record read back against its table (check.go), and the table's own
// columns as the cache lays them out (codec.go).
//
// It reads no file and knows no index, segment, cache or masker: the
// retriever reads the text back, masks it and makes the answers
// (deps_test.go keeps it so).
package records

import (
	"slices"

	"runls/recordformat"
)

// Table: what the index knows of the records of one record file
// (spec §2), from its own parse of the file as it reads it. It is the one
// place that knows where records start and end: the grouped diagnostics
// (§9), the outline, folding and hover (§11) are made from it, and so are,
// later, the time and level of a result's record (§9 run/search items: a
// piece finds its record by its line) and run/records (§13: every record of
// an episode, one conversation, one agent, a level, a time window, in time
// order, paged).
//
// Layout. Records are kept in file order as columns, entry i of each being
// record i; no pointer and no map per record, so that the table can later be
// written to disk and mapped as it is (the persisted index, §15):
//
//	line []uint32  first line of the record (0-based)
//	sec  []uint32  its time (recordformat.TimeKey of its first line, which
//	ms   []uint16  sorts as the times compare as text) on a clock of fields
//	               as written, and its milliseconds (time.go); secNone
//	               for a line before the file's first record
//	conv []uint32  its conversation id (the index's): 0 for no conversation
//	               field, else the id of the id as written ("-" included)
//	meta []uint8   level (bits 0-2, recordformat.Level), kind (bits 3-4:
//	               KindFielded, KindUnfielded, KindBeforeFirst, KindForeign), what
//	               indexing made of it (bits 5-6: outcome*) and whether its
//	               milliseconds follow a "." rather than a "," (bit 7), so
//	               that its time is given back as written
//
// 15 bytes a record (measured with the slices' spare room: BenchmarkIndex's
// records-B/record). A record runs from its first line to the line before
// the next record's (the last record: to the file's last line); empty lines
// belong to the record above them, and empty lines before the first record
// to none. Its text is not kept: it is read back from the file through the
// file's line index, as results are, and checked against the columns.
//
// Two short lists complete the columns for the diagnostics, so that they are
// made without reading the file: spans, the records that have continuation
// lines without the two-space indent (one entry each, in file order), and
// runs, the maximal runs of unfielded records that a fielded record has
// closed.
//
// Versions. A table is part of a fileState and versioned with it: the
// columns and lists only grow, and versions share their backing arrays (a
// reader never looks past its own lengths). What a later read can still
// change is this version's own: the file's last record, which may gain lines
// (pend), the line count, and the unfielded run still open. A record thus
// completes across reads without ever being counted twice.
type Table struct {
	// What a result's item reads (RecordAt, Time, Meta) first, in the
	// struct's first two cache lines: they were four (issue 33).
	line     []uint32
	sec      []uint32
	ms       []uint16
	meta     []uint8
	lines    uint32 // this version's own: see below
	hasPend  bool
	pend     pendingRecord
	endUnits uint32

	conv []uint32
	over []TimeOver // the times off the clock of sec

	spans []Span // of committed records
	runs  []Run  // closed by a committed fielded record

	// State after the committed records, kept with them. open is the
	// unfielded run the last committed record ends, if hasOpen; end is the
	// line after that record's last line, lastUnits the UTF-16 length of its
	// last line. The zero table is the table of a file not read yet.
	open      Run
	hasOpen   bool
	fielded   bool // a committed record has the conversation field
	end       uint32
	lastUnits uint32
	// lastKey is the committed last record's time key; descents lists the
	// committed records whose time is earlier than the one before them, so
	// that run/records walks the file's runs in time order (page.go).
	lastKey  int64
	descents []uint32

	// This version's own (first, above): the last record when it may still
	// gain lines (pend, hasPend), and where the file's lines end (lines and
	// endUnits, as end and lastUnits with pend counted).
}

// Kinds of records in the meta column.
const (
	KindFielded = iota
	KindUnfielded
	KindBeforeFirst
	KindForeign // a record of a foreign log (spec §2 "Other layouts")
)

// What indexing made of a record, in the meta column: its pieces are
// indexed, or none is, because it is left out (its level or a leftOut
// reading, spec §3), because masking left no term in it (§8), or because it
// has no term to search (§4).
const (
	OutcomeIndexed = iota
	OutcomeLeftOut
	OutcomeMasked
	OutcomeNoTerms
)

const (
	metaLevelMask   = 0b111
	metaKindShift   = 3
	metaOutcomeShft = 5
	MetaDotMillis   = 1 << 7
)

func packMeta(level recordformat.Level, kind, outcome int) uint8 {
	return uint8(level)&metaLevelMask | uint8(kind)<<metaKindShift | uint8(outcome)<<metaOutcomeShft
}

// MetaLevel, MetaKind and MetaOutcome read a record's meta bits.
func MetaLevel(m uint8) recordformat.Level { return recordformat.Level(m & metaLevelMask) }
func MetaKind(m uint8) int                 { return int(m>>metaKindShift) & 0b11 }
func MetaOutcome(m uint8) int              { return int(m>>metaOutcomeShft) & 0b11 }

// Span is a record's continuation lines without the indent: the
// first and last of them (lines), how many there are (empty lines aside), and
// the UTF-16 length of the last.
type Span struct {
	First, Last, Count, LastUnits uint32
}

// Run is a maximal run of unfielded records: its first and last
// record, and, once closed, the end of the last record (its last line and
// that line's UTF-16 length).
type Run struct {
	First, Last       uint32
	EndLine, EndUnits uint32
}

type pendingRecord struct {
	line    uint32
	time    int64
	conv    uint32
	meta    uint8
	span    Span
	hasSpan bool
}

// AfterCommit is the table as the next read of an appended file starts it:
// the committed records only (the pending one is read again).
func (t Table) AfterCommit() Table {
	t.pend, t.hasPend = pendingRecord{}, false
	t.lines, t.endUnits = t.end, t.lastUnits
	return t
}

// Add adds one record as the ingester groups lines (rec: its lines, parsed in
// buf; first: the line number of rec[0]); pending: it may still gain lines.
// A line before the first record is a record of its own for the ingester;
// here an empty one belongs to the record above it, or to none.
func (t *Table) Add(buf []byte, rec []recordformat.Line, first uint32, conv uint32, outcome int, pending bool) {
	head := rec[0]
	lastText := buf[rec[len(rec)-1].Start:rec[len(rec)-1].TextEnd]
	units := uint32(recordformat.UTF16Len(lastText))
	end := first + uint32(len(rec))
	if (head.Kind == recordformat.BeforeFirst || head.Kind == recordformat.Foreign && head.Time == recordformat.NoTime) && head.Empty() {
		if !pending {
			t.end, t.lastUnits = end, units
		}
		t.lines, t.endUnits = end, units
		return
	}
	kind := kindOf(head)
	key := recordformat.NoTime
	switch kind {
	case KindForeign:
		key = head.Time // its layout's time, if it has one (spec §2)
	case KindFielded, KindUnfielded:
		key = recordformat.TimeKey(buf[head.Start:head.TextEnd])
	}
	var span Span
	for i, l := range rec[1:] {
		if l.Kind == recordformat.Unindented && !l.Empty() {
			n := first + 1 + uint32(i)
			if span.Count == 0 {
				span.First = n
			}
			span.Last, span.Count = n, span.Count+1
			span.LastUnits = uint32(recordformat.UTF16Len(buf[l.Start:l.TextEnd]))
		}
	}
	meta := packMeta(head.Level, kind, outcome)
	if kind == KindForeign || kind != KindBeforeFirst && recordformat.StampLen(buf[head.Start:head.TextEnd]) == StampWithMillis && buf[head.Start+StampSeconds] == '.' {
		meta |= MetaDotMillis // a foreign log's times are shown with "." (recordformat.KeyText)
	}
	t.lines, t.endUnits = end, units
	if pending {
		t.pend = pendingRecord{line: first, time: key, conv: conv, meta: meta, span: span, hasSpan: span.Count > 0}
		t.hasPend = true
		return
	}
	i := uint32(len(t.line))
	t.line = append(t.line, first)
	sec, ms, ok := packTime(key)
	if !ok {
		t.over = append(t.over, TimeOver{rec: i, key: key})
	}
	t.sec = append(t.sec, sec)
	t.ms = append(t.ms, ms)
	if i > 0 && key < t.lastKey {
		t.descents = append(t.descents, i)
	}
	t.lastKey = key
	t.conv = append(t.conv, conv)
	t.meta = append(t.meta, meta)
	if span.Count > 0 {
		t.spans = append(t.spans, span)
	}
	switch {
	case kind == KindFielded:
		if t.hasOpen {
			t.open.EndLine, t.open.EndUnits = first-1, t.lastUnits
			t.runs = append(t.runs, t.open)
			t.hasOpen = false
		}
		t.fielded = true
	case kind == KindForeign:
		// A foreign log's records have no conversation field to miss.
	case !t.hasOpen:
		t.open, t.hasOpen = Run{First: i, Last: i}, true
	default:
		t.open.Last = i
	}
	t.end, t.lastUnits = end, units
}

// The table as a reader sees it: the committed records, then the pending one.

// Empty reports whether t is the table of a file with no record, as a
// note's is.
func (t *Table) Empty() bool {
	return len(t.line) == 0 && len(t.over) == 0 && len(t.spans) == 0 && len(t.runs) == 0 && len(t.descents) == 0 &&
		t.open == Run{} && !t.hasOpen && !t.fielded && t.end == 0 && t.lastUnits == 0 && t.lastKey == 0 &&
		!t.hasPend && t.lines == 0 && t.endUnits == 0 && t.pend == pendingRecord{}
}

// Len is how many records the table holds, the pending one included.
func (t *Table) Len() int {
	if t.hasPend {
		return len(t.line) + 1
	}
	return len(t.line)
}

// Line is the first line of record i.
func (t *Table) Line(i int) uint32 {
	if i < len(t.line) {
		return t.line[i]
	}
	return t.pend.line
}

// Time is the time key of record i (recordformat.TimeKey).
func (t *Table) Time(i int) int64 {
	switch {
	case i >= len(t.sec):
		return t.pend.time
	case t.sec[i] == secOver:
		return overKey(t.over, i)
	}
	return unpackTime(t.sec[i], t.ms[i])
}

// Conv is the conversation id of record i (0: no conversation field).
func (t *Table) Conv(i int) uint32 {
	if i < len(t.conv) {
		return t.conv[i]
	}
	return t.pend.conv
}

// Meta is the meta bits of record i (MetaLevel, MetaKind, MetaOutcome).
func (t *Table) Meta(i int) uint8 {
	if i < len(t.meta) {
		return t.meta[i]
	}
	return t.pend.meta
}

// Last is the last line of record i.
func (t *Table) Last(i int) uint32 {
	if i+1 < t.Len() {
		return t.Line(i+1) - 1
	}
	return t.lines - 1
}

// Lines is the file's line count as read; EndUnits the UTF-16 length of
// its last line.
func (t *Table) Lines() uint32    { return t.lines }
func (t *Table) EndUnits() uint32 { return t.endUnits }

// Unfielded reports whether record i has no conversation field (a line
// before the first record counts as such a record, spec §2).
func (t *Table) Unfielded(i int) bool { return MetaKind(t.Meta(i)) != KindFielded }

// RecordAt returns the record that holds line n, or -1 (an empty line before
// the first record, or past the end).
func (t *Table) RecordAt(n uint32) int {
	if t.Len() == 0 || n < t.Line(0) || n >= t.lines {
		return -1
	}
	if t.hasPend && n >= t.pend.line {
		return len(t.line)
	}
	return lastAtOrBefore(t.line, n, t.lines)
}

// lastAtOrBefore returns the last i with line[i] <= n, where line ascends,
// line[0] <= n, and end is past the last line the entries can hold. It
// starts where n would be if the records were spread evenly over [line[0],
// end), then gallops to it: a result's item finds its record on one or two
// cache lines of a table that is cold by then, where a binary search
// touched a dozen (issue 33).
func lastAtOrBefore(line []uint32, n, end uint32) int {
	k := len(line)
	g := spreadGuess(line, n, end)
	lo, hi := 0, k // line[lo] <= n, and hi is k or line[hi] > n
	if line[g] <= n {
		lo = g
		for step := 1; lo+step < k; step *= 2 {
			if line[lo+step] > n {
				hi = lo + step
				break
			}
			lo += step
		}
	} else {
		hi = g
		for step := 1; hi-step > 0; step *= 2 {
			if line[hi-step] <= n {
				lo = hi - step
				break
			}
			hi -= step
		}
	}
	i, found := slices.BinarySearch(line[lo:hi], n)
	if !found {
		i-- // line[lo] <= n: i > 0
	}
	return lo + i
}

// spreadGuess is where lastAtOrBefore starts: the entry n would be at if
// the records were spread evenly over [line[0], end); line is not empty.
func spreadGuess(line []uint32, n, end uint32) int {
	g := 0
	if end > line[0] && n > line[0] {
		g = int(uint64(n-line[0]) * uint64(len(line)) / uint64(end-line[0]))
	}
	return min(g, len(line)-1)
}

// Spans returns the unindented spans of every record, the pending one's
// included, in file order.
func (t *Table) Spans() []Span {
	if !t.hasPend || !t.pend.hasSpan {
		return t.spans
	}
	return append(t.spans[:len(t.spans):len(t.spans)], t.pend.span)
}

// Runs returns every maximal run of unfielded records, the last one
// closed at the file's end, in file order.
func (t *Table) Runs() []Run {
	runs := t.runs[:len(t.runs):len(t.runs)]
	open, hasOpen := t.open, t.hasOpen
	if t.hasPend {
		last := uint32(len(t.line))
		switch {
		case MetaKind(t.pend.meta) == KindFielded && hasOpen:
			open.EndLine, open.EndUnits = t.pend.line-1, t.lastUnits
			runs = append(runs, open)
			hasOpen = false
		case MetaKind(t.pend.meta) == KindFielded:
		case !hasOpen:
			open, hasOpen = Run{First: last, Last: last}, true
		default:
			open.Last = last
		}
	}
	if hasOpen {
		open.EndLine, open.EndUnits = t.lines-1, t.endUnits
		runs = append(runs, open)
	}
	return runs
}

// TimeRuns returns where the table's runs in time order start (the first
// record, then each record whose time is earlier than the one before it, the
// pending one's included), with the table's length last.
func (t *Table) TimeRuns() []uint32 {
	runs := make([]uint32, 0, len(t.descents)+3)
	runs = append(append(runs, 0), t.descents...)
	if t.hasPend && len(t.line) > 0 && t.pend.time < t.lastKey {
		runs = append(runs, uint32(len(t.line)))
	}
	return append(runs, uint32(t.Len()))
}

// Unwarned reports whether t has no span of unindented lines and no run of
// unfielded records, so no warning (Warnings), reading its lengths and
// state only, not its columns' values: a restored file's table in the cache
// entry's mapping stays unread (the retriever's diagnostics).
func (t *Table) Unwarned() bool {
	return len(t.spans) == 0 && len(t.runs) == 0 && len(t.Spans()) == 0 && len(t.Runs()) == 0
}

// AnyFielded reports whether some record has the conversation field.
func (t *Table) AnyFielded() bool {
	return t.fielded || (t.hasPend && MetaKind(t.pend.meta) == KindFielded)
}

// Footprint is the bytes the table holds (capacity of its slices).
func (t *Table) Footprint() int64 {
	return int64(cap(t.line))*4 + int64(cap(t.sec))*4 + int64(cap(t.ms))*2 + int64(cap(t.conv))*4 + int64(cap(t.meta)) +
		int64(cap(t.over))*16 + int64(cap(t.spans))*16 + int64(cap(t.runs))*16 + int64(cap(t.descents))*4
}

// Trim gives back the spare room appends left in the columns, when it is
// large: after a file is read whole (not on each append: the copy would cost
// every read of a growing file).
func (t *Table) Trim() {
	if n := len(t.line); cap(t.line)-n > n/8 {
		t.line, t.sec, t.ms = slices.Clip(slices.Clone(t.line)), slices.Clip(slices.Clone(t.sec)), slices.Clip(slices.Clone(t.ms))
		t.conv, t.meta = slices.Clip(slices.Clone(t.conv)), slices.Clip(slices.Clone(t.meta))
	}
}
