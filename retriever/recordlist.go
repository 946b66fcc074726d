package retriever

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"runls/recordformat"
)

// Records in time order (spec §13 run/records): every record of one
// episode's record files that passes a request's filters, whole, across
// agents, ordered by time, then path, then line, and paged with a cursor.
//
// It is a merge, not a scan of the files: each file's record table (records.go)
// is walked from the first record the page can start at, found by binary
// search on its times, and the files' walks are merged by a heap until the
// page is full; only then are the page's records read back from their files,
// a span of lines at a time. A file whose times go back somewhere (a clock
// set back, records appended by two writers) is walked as its runs in time
// order, each a stream of the merge; one whose times go back more than
// maxTimeRuns times has its passing records sorted by time for the request.
//
// Paging. A cursor is the place in that order of the last record given (its
// time, file and line, with a fingerprint of the filters; recordcursor.go).
// The next page holds the records that come after that place in the index
// as it is when the page is asked: when no file changed, all pages together
// are the one big answer; when files grew or changed between pages, no
// record is given twice and the order holds across pages, records appended
// after the place are given, and records that now sort before it (a
// rewritten file, a late record with an earlier time) are not.

// RecordsRequest is a run/records request (spec §13). Empty strings and a
// zero Limit are the same as absent fields.
type RecordsRequest struct {
	Episode      string `json:"episode,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Agent        string `json:"agent,omitempty"`
	MinLevel     string `json:"minLevel,omitempty"`
	From         string `json:"from,omitempty"`
	To           string `json:"to,omitempty"`
	Limit        int    `json:"limit,omitempty"`
	Cursor       string `json:"cursor,omitempty"`
	// At asks for the page that holds the record at this location (a
	// continuation line: the record that holds it), starting about Limit/2
	// records before it (spec §13, revision 3).
	At *Location `json:"at,omitempty"`

	// Lines asks for each record's lines as written (masked when masking
	// is on), as the command line prints them.
	Lines bool `json:"-"`
}

// RecordsResult is a page of records: the run/records result shape.
// Cursor is nil on the page that ends the list, PreviousCursor on the page
// that starts it; AtIndex is the index in Records of the record a request
// At asked for, when it passes the filters.
type RecordsResult struct {
	Records        []Record `json:"records"`
	Cursor         *string  `json:"cursor"`
	PreviousCursor *string  `json:"previousCursor"`
	AtIndex        *int     `json:"atIndex,omitempty"`

	fp uint64 // the filters' fingerprint, for CursorAfter
}

// Record is one record, whole. Time is nil only for a line before a file's
// first record; Level is nil for history records and that line;
// Conversation is nil for records without the conversation field.
type Record struct {
	Location     Location `json:"location"`
	Time         *string  `json:"time"`
	Level        *string  `json:"level"`
	State        string   `json:"state"`
	Conversation *string  `json:"conversation"`
	Agent        string   `json:"agent"`
	Episode      string   `json:"episode"`
	// Text is the record's evidence text, its lines joined with "\n".
	Text string `json:"text"`

	// Path is the file's absolute path, File its path relative to the run
	// folder (slash-separated).
	Path string `json:"-"`
	File string `json:"-"`
	// Lines are the record's lines as written, without line ends, when the
	// request asked for them.
	Lines []string `json:"-"`

	key int64 // its time key
}

// CursorAfter is the cursor that continues the list after record i of the
// page, for a client that shows only part of a page (the MCP tool bounds
// its answers).
func (r RecordsResult) CursorAfter(i int) string {
	rec := &r.Records[i]
	return recordPos{key: rec.key, rel: rec.File, line: uint32(rec.Location.Range.Start.Line)}.cursor(r.fp)
}

// Validate checks a request's fields, returning a *FieldError.
func (r RecordsRequest) Validate() error {
	_, err := r.parse()
	return err
}

// Records answers a run/records request from the index, brought up to date
// first as a search is (spec §7).
func (ix *Index) Records(ctx context.Context, req RecordsRequest) (RecordsResult, error) {
	q, err := req.parse()
	if err != nil {
		return RecordsResult{}, err
	}
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return RecordsResult{}, err
	}
	res, err := ix.records(ctx, q)
	if errors.Is(err, ErrChanged) {
		// A file changed between its update and the read of its lines: the
		// update reads it again, and the page is made once more.
		if _, err := ix.Refresh(ctx, nil); err != nil {
			return RecordsResult{}, err
		}
		res, err = ix.records(ctx, q)
	}
	return res, err
}

// recordsQuery is a valid request, parsed.
type recordsQuery struct {
	epNum    string // the episode's number, as EpisodeNumber gives it
	conv     string
	hasConv  bool
	agent    string
	minLevel recordformat.Level // None: every level
	window   bool               // from or to given: records without a time are left out
	from, to int64              // inclusive bounds on time keys
	limit    int
	after    *recordPos // the cursor's place
	before   *recordPos // a previous cursor's place: the page ends just before it
	at       *Location
	lines    bool
	fp       uint64
}

var levelByName = map[string]recordformat.Level{
	"TRACE": recordformat.Trace, "DEBUG": recordformat.Debug, "INFO": recordformat.Info,
	"WARN": recordformat.Warn, "ERROR": recordformat.Error,
}

// timeBoundLen is the length of `yyyy-MM-dd HH:mm:ss`, the form of from and to.
const timeBoundLen = 19

func (r RecordsRequest) parse() (*recordsQuery, error) {
	q := &recordsQuery{conv: r.Conversation, hasConv: r.Conversation != "", agent: r.Agent, limit: r.Limit, lines: r.Lines,
		from: recordformat.NoTime, to: noLaterBound}
	var ok bool
	if r.Episode == "" {
		return nil, &FieldError{"episode", "", "required: want episode-N, N decimal digits"}
	}
	if q.epNum, ok = EpisodeNumber(r.Episode); !ok {
		return nil, &FieldError{"episode", r.Episode, "want episode-N, N decimal digits"}
	}
	if r.Agent != "" && !ValidAgent(r.Agent) {
		return nil, &FieldError{"agent", r.Agent, `an agent folder name: no "/" or "\", not "." or ".."`}
	}
	if r.MinLevel != "" {
		if q.minLevel, ok = levelByName[strings.ToUpper(r.MinLevel)]; !ok {
			return nil, &FieldError{"minLevel", r.MinLevel, "want TRACE, DEBUG, INFO, WARN or ERROR"}
		}
	}
	bound := func(field, v string) (int64, error) {
		if len(v) != timeBoundLen || recordformat.StampLen([]byte(v)) != timeBoundLen {
			return 0, &FieldError{field, v, "want a time as yyyy-MM-dd HH:mm:ss"}
		}
		return recordformat.TimeKey([]byte(v)), nil
	}
	if r.From != "" {
		k, err := bound("from", r.From)
		if err != nil {
			return nil, err
		}
		q.from, q.window = k, true
	}
	if r.To != "" {
		k, err := bound("to", r.To)
		if err != nil {
			return nil, err
		}
		// To the second: every time of that second, milliseconds or not.
		q.to, q.window = k+secondKeys-1, true
	}
	if q.from > q.to {
		return nil, &FieldError{"to", r.To, "before from " + r.From}
	}
	switch {
	case r.Limit == 0:
		q.limit = DefaultRecordsLimit
	case r.Limit < 1 || r.Limit > MaxRecordsLimit:
		return nil, RecordsLimitError(strconv.Itoa(r.Limit))
	}
	q.fp = q.fingerprint()
	if r.At != nil && r.Cursor != "" {
		return nil, &FieldError{"at", r.At.URI, "give at or cursor, not both"}
	}
	if r.Cursor != "" {
		pos, before, err := parseCursor(r.Cursor, q.fp)
		if err != nil {
			return nil, err
		}
		if before {
			q.before = &pos
		} else {
			q.after = &pos
		}
	}
	if r.At != nil {
		if !strings.HasPrefix(r.At.URI, "file://") || r.At.Range.Start.Line < 0 {
			return nil, &FieldError{"at", r.At.URI, "want a Location of a record file of the episode"}
		}
		q.at = r.At
	}
	return q, nil
}

// noLaterBound is the to of a request without one.
const noLaterBound = 1<<63 - 1

// secondKeys is how many time keys one second has (recordformat.TimeKey).
const secondKeys = 1024

// records makes a page from what is indexed now.
func (ix *Index) records(ctx context.Context, q *recordsQuery) (RecordsResult, error) {
	res := RecordsResult{Records: []Record{}, fp: q.fp}
	var conv uint32
	if q.hasConv {
		id, ok := ix.lookupConv(q.conv)
		if !ok {
			return res, nil // no record was written in it
		}
		conv = id
	}
	files, agents := ix.episodeRecordFiles(q)
	var stop *recordPos // at and previous pages: where the walk from the list's start stops
	switch {
	case q.at != nil:
		pos, err := ix.atPos(q, files)
		if err != nil {
			return RecordsResult{}, err
		}
		stop = &pos
	case q.before != nil:
		stop = q.before
	}
	h := newStreamHeap(files, q, conv, q.after)
	picks := make([]recordPick, 0, min(q.limit, 1024))
	take := func() {
		s := h[0]
		picks = append(picks, recordPick{file: s.file, rec: s.rec, key: s.key})
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
		keep := q.limit
		if q.at != nil {
			keep = q.limit / 2
		}
		for steps := 0; len(h) > 0 && h.topPos(files).before(*stop); steps++ {
			if steps%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return RecordsResult{}, err
				}
			}
			take()
			if len(picks) > keep {
				picks = append(picks[:0], picks[1:]...)
				preceded = true
			}
		}
		if q.before != nil {
			h = nil // the page ends just before the place
		}
	} else if q.after != nil {
		// A cursor's page: preceded unless no record passing the filters
		// comes before its first one (what was before it may be gone).
		first := newStreamHeap(files, q, conv, nil)
		preceded = len(first) > 0 && (len(h) == 0 || first.topPos(files).before(h.topPos(files)))
	}
	for len(h) > 0 && len(picks) < q.limit {
		if len(picks)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return RecordsResult{}, err
			}
		}
		if q.at != nil && res.AtIndex == nil && h.topPos(files) == *stop {
			i := len(picks)
			res.AtIndex = &i
		}
		take()
	}
	if len(picks) == 0 {
		return res, nil
	}
	res.Records = make([]Record, len(picks))
	if err := ix.readPicks(ctx, q, files, agents, picks, res.Records); err != nil {
		return RecordsResult{}, err
	}
	if len(h) > 0 || (q.before != nil && stop != nil && ix.anyAtOrAfter(files, q, conv, *stop)) {
		c := res.CursorAfter(len(res.Records) - 1)
		res.Cursor = &c
	}
	if preceded {
		first := &res.Records[0]
		c := recordPos{key: first.key, rel: first.File, line: uint32(first.Location.Range.Start.Line)}.previousCursor(q.fp)
		res.PreviousCursor = &c
	}
	return res, nil
}

// newStreamHeap is the merge of the files' streams of passing records,
// after the place after when given.
func newStreamHeap(files []*fileState, q *recordsQuery, conv uint32, after *recordPos) streamHeap {
	qq := *q
	qq.after = after
	h := make(streamHeap, 0, len(files))
	for i, fs := range files {
		if _, written := slices.BinarySearch(fs.convs, conv); q.hasConv && q.conv != "-" && !written {
			continue // fs.convs holds every id written in the file but "-"
		}
		for _, s := range recordStreams(fs, i, &qq, conv) {
			if s.next() {
				h = append(h, s)
			}
		}
	}
	h.init()
	return h
}

// topPos is the place of the heap's next record.
func (h streamHeap) topPos(files []*fileState) recordPos {
	s := h[0]
	return recordPos{key: s.key, rel: files[s.file].rel, line: s.t.recLine(s.rec)}
}

// anyAtOrAfter reports whether a record passing the filters is at pos or
// after it (a previous page then has a next one).
func (ix *Index) anyAtOrAfter(files []*fileState, q *recordsQuery, conv uint32, pos recordPos) bool {
	h := newStreamHeap(files, q, conv, nil)
	for len(h) > 0 {
		if !h.topPos(files).before(pos) {
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

// atPos is the place of the record an at request names: the record that
// holds its line, in a record file of the episode (of the agent, when
// given).
func (ix *Index) atPos(q *recordsQuery, files []*fileState) (recordPos, error) {
	path, err := pathOfURI(q.at.URI)
	if err != nil {
		return recordPos{}, &FieldError{"at", q.at.URI, "not a file URI"}
	}
	fs := ix.recordFile(path)
	if fs == nil || !slices.Contains(files, fs) {
		return recordPos{}, &FieldError{"at", q.at.URI, "not a record file of episode-" + q.epNum + " (of the agent asked for)"}
	}
	t := fs.records()
	i := t.recordAt(uint32(q.at.Range.Start.Line))
	if i < 0 {
		i = 0 // an empty line before the first record: the list's start there
		if t.len() == 0 {
			return recordPos{key: recordformat.NoTime, rel: fs.rel}, nil
		}
	}
	return recordPos{key: t.recTime(i), rel: fs.rel, line: t.recLine(i)}, nil
}

// episodeRecordFiles returns the record files of the query's episode (of
// its agent, when given), by path byte-wise, and their agents' names.
func (ix *Index) episodeRecordFiles(q *recordsQuery) ([]*fileState, []string) {
	ix.mu.RLock()
	var files []*fileState
	for _, fs := range ix.files {
		if fs.form.IsRecord() && !fs.binary && fs.epNum == q.epNum && (q.agent == "" || ix.agents[fs.agent] == q.agent) {
			files = append(files, fs)
		}
	}
	slices.SortFunc(files, func(a, b *fileState) int { return strings.Compare(a.rel, b.rel) })
	agents := make([]string, len(files))
	for i, fs := range files {
		agents[i] = ix.agents[fs.agent]
	}
	ix.mu.RUnlock()
	return files, agents
}

// recordPick is a record chosen for the page: file (index into the
// files), record (index into its table) and time key.
type recordPick struct {
	file int
	rec  int
	key  int64
}

// recordStream walks records of one file that pass the filters, in time
// order (then line): a run of the table in time order between bounds found
// by binary search, or order, the file's passing records sorted by time.
type recordStream struct {
	t     *recordTable
	rel   string
	file  int
	q     *recordsQuery
	conv  uint32
	i     int // the next record to look at (of the table, or of order)
	end   int
	order []orderedRecord

	rec int   // the current record
	key int64 // its time key
}

// maxTimeRuns is how many runs in time order a file may have and still be
// walked run by run, each its own stream; a file whose times go back more
// often is sorted for the request.
const maxTimeRuns = 64

// recordStreams returns the streams of one file: one when its times never go
// back, one per run in time order when they go back a few times, else one
// over the file's passing records sorted by time.
func recordStreams(fs *fileState, file int, q *recordsQuery, conv uint32) []*recordStream {
	t := fs.records()
	runs := t.timeRuns()
	if len(runs)-1 > maxTimeRuns {
		s := &recordStream{t: t, rel: fs.rel, file: file, q: q, conv: conv}
		for i := 0; i < t.len(); i++ {
			if k := t.recTime(i); s.passes(i, k) {
				s.order = append(s.order, orderedRecord{rec: int32(i), key: k})
			}
		}
		// Stable: records of equal times stay in line order.
		slices.SortStableFunc(s.order, func(a, b orderedRecord) int { return cmpKeys(a.key, b.key) })
		s.end = len(s.order)
		return []*recordStream{s}
	}
	lo := q.from
	if q.after != nil && q.after.key > lo {
		lo = q.after.key
	}
	out := make([]*recordStream, 0, len(runs)-1)
	for r := 0; r+1 < len(runs); r++ {
		s := &recordStream{t: t, rel: fs.rel, file: file, q: q, conv: conv, i: int(runs[r]), end: int(runs[r+1])}
		if q.window || q.after != nil {
			// Times never go back within a run: every record before the first
			// at lo or later is before the page, every one after the last at
			// to or earlier past it.
			s.i = firstAtOrAfter(t, s.i, s.end, lo)
			if q.to != noLaterBound {
				s.end = firstAtOrAfter(t, s.i, s.end, q.to+1)
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
func firstAtOrAfter(t *recordTable, lo, hi int, key int64) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.recTime(m) < key {
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
		if key := s.t.recTime(rec); s.passes(rec, key) {
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
	if q.hasConv && t.recConv(i) != s.conv {
		return false
	}
	meta := t.recMeta(i)
	// minLevel leaves out records without a level (spec §13, revision 3).
	if lv := metaLevel(meta); q.minLevel != recordformat.None && (lv == recordformat.None || lv < q.minLevel) {
		return false
	}
	if q.window && (k == recordformat.NoTime || k < q.from || k > q.to) {
		return false
	}
	if a := q.after; a != nil && k <= a.key && !a.before(recordPos{key: k, rel: s.rel, line: t.recLine(i)}) {
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
	return x.t.recLine(x.rec) < y.t.recLine(y.rec)
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

// pathOfURI is the path of a file URI, as FileURI writes them.
func pathOfURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", errors.New("not a file URI")
	}
	return filepath.FromSlash(u.Path), nil
}
