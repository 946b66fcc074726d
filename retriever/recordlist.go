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
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// Records in time order (spec §13 run/records): every record of one
// episode's record files that passes a request's filters, whole, across
// agents, ordered by time, then path, then line, and paged with a cursor.
//
// The request is checked here; the episode's tables are taken under the
// read lock, and records.Page (one call) merges them into the page's picks
// and the next cursor (internal/records/page.go says how, and what the next
// page is when files changed between pages); only then are the page's
// records read back from their files, a stretch of lines at a time
// (recordpage.go).

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
	return records.Pos{Key: rec.key, Rel: rec.File, Line: uint32(rec.Location.Range.Start.Line)}.Cursor(r.fp)
}

// Validate checks a request's fields, returning a *FieldError.
func (r RecordsRequest) Validate() error {
	_, err := r.parse()
	return err
}

// Records answers a run/records request from the index, brought up to date
// first as a search is (spec §7).
func (ix *Index) Records(ctx context.Context, req RecordsRequest) (RecordsResult, error) {
	return viewed(ctx, ix, "listing records", func() (RecordsResult, error) { return ix.recordsView(ctx, req) })
}

func (ix *Index) recordsView(ctx context.Context, req RecordsRequest) (RecordsResult, error) {
	q, err := req.parse()
	if err != nil {
		return RecordsResult{}, err
	}
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return RecordsResult{}, err
	}
	res, err := ix.records(ctx, q, req.At)
	if errors.Is(err, ErrChanged) {
		// A file changed between its update and the read of its lines: the
		// update reads it again, and the page is made once more.
		if _, err := ix.Refresh(ctx, nil); err != nil {
			return RecordsResult{}, err
		}
		res, err = ix.records(ctx, q, req.At)
	}
	return res, err
}

var levelByName = map[string]recordformat.Level{
	"TRACE": recordformat.Trace, "DEBUG": recordformat.Debug, "INFO": recordformat.Info,
	"WARN": recordformat.Warn, "ERROR": recordformat.Error,
}

// timeBoundLen is the length of `yyyy-MM-dd HH:mm:ss`, the form of from and to.
const timeBoundLen = 19

func (r RecordsRequest) parse() (*records.Query, error) {
	q := &records.Query{Conv: r.Conversation, HasConv: r.Conversation != "", Agent: r.Agent, Limit: r.Limit, Lines: r.Lines,
		From: recordformat.NoTime, To: records.NoLaterBound}
	var ok bool
	if r.Episode == "" {
		return nil, &FieldError{"episode", "", "required: want episode-N, N decimal digits"}
	}
	if q.EpNum, ok = EpisodeNumber(r.Episode); !ok {
		return nil, &FieldError{"episode", r.Episode, "want episode-N, N decimal digits"}
	}
	if r.Agent != "" && !ValidAgent(r.Agent) {
		return nil, &FieldError{"agent", r.Agent, `an agent folder name: no "/" or "\", not "." or ".."`}
	}
	if r.MinLevel != "" {
		if q.MinLevel, ok = levelByName[strings.ToUpper(r.MinLevel)]; !ok {
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
		q.From, q.Window = k, true
	}
	if r.To != "" {
		k, err := bound("to", r.To)
		if err != nil {
			return nil, err
		}
		// To the second: every time of that second, milliseconds or not.
		q.To, q.Window = k+records.SecondKeys-1, true
	}
	if q.From > q.To {
		return nil, &FieldError{"to", r.To, "before from " + r.From}
	}
	switch {
	case r.Limit == 0:
		q.Limit = DefaultRecordsLimit
	case r.Limit < 1 || r.Limit > MaxRecordsLimit:
		return nil, RecordsLimitError(strconv.Itoa(r.Limit))
	}
	q.FP = q.Fingerprint()
	if r.At != nil && r.Cursor != "" {
		return nil, &FieldError{"at", r.At.URI, "give at or cursor, not both"}
	}
	if r.Cursor != "" {
		pos, before, err := records.ParseCursor(r.Cursor, q.FP)
		switch {
		case errors.Is(err, records.ErrOtherList):
			return nil, &FieldError{"cursor", clipValue(r.Cursor),
				"made for another list: a cursor continues the list of the same episode, conversation, agent, minLevel, from and to"}
		case err != nil:
			return nil, &FieldError{"cursor", clipValue(r.Cursor), "not a cursor of run/records: give the cursor of the previous answer as it is"}
		}
		if before {
			q.Before = &pos
		} else {
			q.After = &pos
		}
	}
	if r.At != nil {
		if !strings.HasPrefix(r.At.URI, "file://") || r.At.Range.Start.Line < 0 {
			return nil, &FieldError{"at", r.At.URI, "want a Location of a record file of the episode"}
		}
	}
	return q, nil
}

// clipValue shortens a value quoted in an error.
func clipValue(s string) string {
	if len(s) <= 80 {
		return s
	}
	return CutText(s, 80) + "…"
}

// records makes a page from what is indexed now; at, when given, names the
// record the page holds.
func (ix *Index) records(ctx context.Context, q *records.Query, at *Location) (RecordsResult, error) {
	res := RecordsResult{Records: []Record{}, fp: q.FP}
	var conv uint32
	if q.HasConv {
		id, ok := ix.state.Convs.Lookup(q.Conv)
		if !ok {
			return res, nil // no record was written in it
		}
		conv = id
	}
	ef := ix.episodeRecordFiles(q)
	var atPos *records.Pos
	if at != nil {
		pos, err := ef.posAt(ix, q, at)
		if err != nil {
			return RecordsResult{}, err
		}
		atPos = &pos
	}
	page, err := records.Page(ctx, ef.files, q, conv, atPos)
	if err != nil || len(page.Picks) == 0 {
		return res, err
	}
	res.Records = make([]Record, len(page.Picks))
	if err := ix.rb.readPicks(ctx, q, ef, page.Picks, res.Records); err != nil {
		return RecordsResult{}, err
	}
	if page.Next != "" {
		res.Cursor = &page.Next
	}
	if page.Previous != "" {
		res.PreviousCursor = &page.Previous
	}
	if page.AtIndex >= 0 {
		res.AtIndex = &page.AtIndex
	}
	return res, nil
}

// posAt is the place of the record an at request names: the record that
// holds its line, in a record file of the episode (of the agent, when
// given).
func (ef episodeFiles) posAt(ix *Index, q *records.Query, at *Location) (records.Pos, error) {
	path, err := pathOfURI(at.URI)
	if err != nil {
		return records.Pos{}, &FieldError{"at", at.URI, "not a file URI"}
	}
	fs := ix.recordFile(path)
	i := slices.Index(ef.states, fs)
	if fs == nil || i < 0 {
		return records.Pos{}, &FieldError{"at", at.URI, "not a record file of episode-" + q.EpNum + " (of the agent asked for)"}
	}
	return records.PosAt(ef.files[i], uint32(at.Range.Start.Line)), nil
}

// pathOfURI is the path of a file URI, as FileURI writes them.
func pathOfURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", errors.New("not a file URI")
	}
	return filepath.FromSlash(u.Path), nil
}

// episodeFiles are the record files of an episode, by path byte-wise: their
// states, their tables as records.Page takes them, their agents' names.
type episodeFiles struct {
	states []*corpus.File
	files  []records.File
	agents []string
}

// episodeRecordFiles returns the record files of the query's episode (of
// its agent, when given).
func (ix *Index) episodeRecordFiles(q *records.Query) episodeFiles {
	ix.mu.RLock()
	var states []*corpus.File
	for _, fs := range ix.state.Files {
		if fs.Form.IsRecord() && !fs.Binary && fs.EpNum() == q.EpNum && (q.Agent == "" || ix.state.Agents[fs.Agent] == q.Agent) {
			states = append(states, fs)
		}
	}
	slices.SortFunc(states, func(a, b *corpus.File) int { return strings.Compare(a.Rel, b.Rel) })
	files := make([]records.File, len(states))
	agents := make([]string, len(states))
	for i, fs := range states {
		files[i] = records.File{Table: fs.Records(), Rel: fs.Rel, Convs: fs.Convs()}
		agents[i] = ix.state.Agents[fs.Agent]
	}
	ix.mu.RUnlock()
	return episodeFiles{states: states, files: files, agents: agents}
}
