package records

import (
	"context"
	"slices"

	"runls/recordformat"
)

// Records in time order (spec §13 run/records): every record of one
// episode's record files that passes a request's filters, ordered by time,
// then path, then line.
//
// It is a merge, not a scan of the files: each file's record table is
// walked from the first record the page can start at, found by binary
// search on its times, and the files' walks are merged by a heap until the
// page is full. A file whose times go back somewhere (a clock set back,
// records appended by two writers) is walked as its runs in time order,
// each a stream of the merge; one whose times go back more than
// MaxTimeRuns times has its passing records sorted by time for the request.
//
// Paging. A cursor is the place in that order of the last record given (its
// time, file and line, with a fingerprint of the filters; cursor.go). The
// next page holds the records that come after that place in the tables as
// they are when the page is asked: when no file changed, all pages together
// are the one big answer; when files grew or changed between pages, no
// record is given twice and the order holds across pages, records appended
// after the place are given, and records that now sort before it (a
// rewritten file, a late record with an earlier time) are not.

// File is one record file of a list: its table, its path relative to the
// run folder, and the conversation ids written in it, sorted ("-" aside).
type File struct {
	Table *Table
	Rel   string
	Convs []uint32
}

// Paged is a page's picks: at most q.Limit records in the order of the
// list; Next is the cursor after the last, "" when the list ends there;
// Previous the cursor of the page before, "" when no record passing the
// filters comes before the first; AtIndex the index in Picks of the record
// at the place an at request named, -1 when it is not among them.
type Paged struct {
	Picks          []Pick
	Next, Previous string
	AtIndex        int
}

// Page picks the records of a page from files (by path byte-wise); conv is
// the id of q.Conv when q.HasConv. With at, the page holds the record at
// that place, starting about q.Limit/2 records before it (spec §13,
// revision 3); with q.Before, it ends just before that place.
func Page(ctx context.Context, files []File, q *Query, conv uint32, at *Pos) (Paged, error) {
	out := Paged{AtIndex: -1}
	stop := at // at and previous pages: where the walk from the list's start stops
	if stop == nil {
		stop = q.Before
	}
	h := newStreamHeap(files, q, conv, q.After)
	picks := make([]Pick, 0, min(q.Limit, 1024))
	take := func() {
		s := h[0]
		picks = append(picks, Pick{File: s.file, Rec: s.rec, Key: s.key})
		if s.next() {
			h.fix0()
		} else {
			h.pop0()
		}
	}
	preceded := false // a record passing the filters comes before the page
	if stop != nil {
		// From the list's start to the place, keeping the last records that
		// fit before it: limit of them before a previous cursor's place,
		// about half a page before an at's record. What precedes them costs
		// a walk of the tables, not a read.
		keep := q.Limit
		if at != nil {
			keep = q.Limit / 2
		}
		for steps := 0; len(h) > 0 && h.topPos(files).Before(*stop); steps++ {
			if steps%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return Paged{}, err
				}
			}
			take()
			if len(picks) > keep {
				picks = append(picks[:0], picks[1:]...)
				preceded = true
			}
		}
		if at == nil {
			h = nil // the page ends just before the place
		}
	} else if q.After != nil {
		// A cursor's page: preceded unless no record passing the filters
		// comes before its first one (what was before it may be gone).
		first := newStreamHeap(files, q, conv, nil)
		preceded = len(first) > 0 && (len(h) == 0 || first.topPos(files).Before(h.topPos(files)))
	}
	for len(h) > 0 && len(picks) < q.Limit {
		if len(picks)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Paged{}, err
			}
		}
		if at != nil && out.AtIndex < 0 && h.topPos(files) == *stop {
			out.AtIndex = len(picks)
		}
		take()
	}
	out.Picks = picks
	if len(picks) == 0 {
		return out, nil
	}
	place := func(p Pick) Pos {
		return Pos{Key: p.Key, Rel: files[p.File].Rel, Line: files[p.File].Table.Line(p.Rec)}
	}
	if len(h) > 0 || (at == nil && q.Before != nil && anyAtOrAfter(files, q, conv, *q.Before)) {
		out.Next = place(picks[len(picks)-1]).Cursor(q.FP)
	}
	if preceded {
		out.Previous = place(picks[0]).PreviousCursor(q.FP)
	}
	return out, nil
}

// newStreamHeap is the merge of the files' streams of passing records,
// after the place after when given.
func newStreamHeap(files []File, q *Query, conv uint32, after *Pos) streamHeap {
	qq := *q
	qq.After = after
	h := make(streamHeap, 0, len(files))
	for i, f := range files {
		if _, written := slices.BinarySearch(f.Convs, conv); q.HasConv && q.Conv != "-" && !written {
			continue // f.Convs holds every id written in the file but "-"
		}
		for _, s := range recordStreams(f, i, &qq, conv) {
			if s.next() {
				h = append(h, s)
			}
		}
	}
	h.init()
	return h
}

// topPos is the place of the heap's next record.
func (h streamHeap) topPos(files []File) Pos {
	s := h[0]
	return Pos{Key: s.key, Rel: files[s.file].Rel, Line: s.t.Line(s.rec)}
}

// anyAtOrAfter reports whether a record passing the filters is at pos or
// after it (a previous page then has a next one).
func anyAtOrAfter(files []File, q *Query, conv uint32, pos Pos) bool {
	h := newStreamHeap(files, q, conv, nil)
	for len(h) > 0 {
		if !h.topPos(files).Before(pos) {
			return true
		}
		s := h[0]
		if s.next() {
			h.fix0()
		} else {
			h.pop0()
		}
	}
	return false
}

// PosAt is the place of the record that holds line n of f (a line before
// the first record: the list's start in f).
func PosAt(f File, n uint32) Pos {
	t := f.Table
	i := t.RecordAt(n)
	if i < 0 {
		i = 0 // an empty line before the first record: the list's start there
		if t.Len() == 0 {
			return Pos{Key: recordformat.NoTime, Rel: f.Rel}
		}
	}
	return Pos{Key: t.Time(i), Rel: f.Rel, Line: t.Line(i)}
}

// Pick is a record chosen for the page: File (index into the
// files), Rec (index into its table) and Key, its time key.
type Pick struct {
	File int
	Rec  int
	Key  int64
}

// recordStream walks records of one file that pass the filters, in time
// order (then line): a run of the table in time order between bounds found
// by binary search, or order, the file's passing records sorted by time.
type recordStream struct {
	t     *Table
	rel   string
	file  int
	q     *Query
	conv  uint32
	i     int // the next record to look at (of the table, or of order)
	end   int
	order []orderedRecord

	rec int   // the current record
	key int64 // its time key
}

// MaxTimeRuns is how many runs in time order a file may have and still be
// walked run by run, each its own stream; a file whose times go back more
// often is sorted for the request.
const MaxTimeRuns = 64

// recordStreams returns the streams of one file: one when its times never go
// back, one per run in time order when they go back a few times, else one
// over the file's passing records sorted by time.
func recordStreams(f File, file int, q *Query, conv uint32) []*recordStream {
	t := f.Table
	runs := t.TimeRuns()
	if len(runs)-1 > MaxTimeRuns {
		s := &recordStream{t: t, rel: f.Rel, file: file, q: q, conv: conv}
		for i := 0; i < t.Len(); i++ {
			if k := t.Time(i); s.passes(i, k) {
				s.order = append(s.order, orderedRecord{rec: int32(i), key: k})
			}
		}
		// Stable: records of equal times stay in line order.
		slices.SortStableFunc(s.order, func(a, b orderedRecord) int { return cmpKeys(a.key, b.key) })
		s.end = len(s.order)
		return []*recordStream{s}
	}
	lo := q.From
	if q.After != nil && q.After.Key > lo {
		lo = q.After.Key
	}
	out := make([]*recordStream, 0, len(runs)-1)
	for r := 0; r+1 < len(runs); r++ {
		s := &recordStream{t: t, rel: f.Rel, file: file, q: q, conv: conv, i: int(runs[r]), end: int(runs[r+1])}
		if q.Window || q.After != nil {
			// Times never go back within a run: every record before the first
			// at lo or later is before the page, every one after the last at
			// to or earlier past it.
			s.i = firstAtOrAfter(t, s.i, s.end, lo)
			if q.To != NoLaterBound {
				s.end = firstAtOrAfter(t, s.i, s.end, q.To+1)
			}
		}
		out = append(out, s)
	}
	return out
}

// orderedRecord is a record of a file sorted by time, with its time key.
type orderedRecord struct {
	rec int32
	key int64
}

func cmpKeys(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// firstAtOrAfter is the first record of [lo, hi) of a table in time order
// whose time key is at least key (hi when none is).
func firstAtOrAfter(t *Table, lo, hi int, key int64) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.Time(m) < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// next moves to the next passing record, reporting whether there is one.
func (s *recordStream) next() bool {
	for s.i < s.end {
		if s.order != nil {
			o := s.order[s.i]
			s.i++
			s.rec, s.key = int(o.rec), o.key
			return true
		}
		rec := s.i
		s.i++
		if key := s.t.Time(rec); s.passes(rec, key) {
			s.rec, s.key = rec, key
			return true
		}
	}
	return false
}

// passes reports whether record i, of time key k, passes the filters and
// comes after the cursor.
func (s *recordStream) passes(i int, k int64) bool {
	t, q := s.t, s.q
	if q.HasConv && t.Conv(i) != s.conv {
		return false
	}
	meta := t.Meta(i)
	// MinLevel leaves out records without a level (spec §13, revision 3).
	if lv := MetaLevel(meta); q.MinLevel != recordformat.None && (lv == recordformat.None || lv < q.MinLevel) {
		return false
	}
	if q.Window && (k == recordformat.NoTime || k < q.From || k > q.To) {
		return false
	}
	if a := q.After; a != nil && k <= a.Key && !a.Before(Pos{Key: k, Rel: s.rel, Line: t.Line(i)}) {
		return false
	}
	return true
}

// streamHeap is a min-heap of streams by their current record's time, then
// file (the files are in path order), then line (a file's runs).
type streamHeap []*recordStream

func (h streamHeap) less(a, b int) bool {
	x, y := h[a], h[b]
	if x.key != y.key {
		return x.key < y.key
	}
	if x.file != y.file {
		return x.file < y.file
	}
	return x.t.Line(x.rec) < y.t.Line(y.rec)
}

func (h streamHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h streamHeap) fix0() { h.down(0) }

func (h *streamHeap) pop0() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}

func (h streamHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
