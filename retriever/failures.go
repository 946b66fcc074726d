package retriever

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// What went wrong in a run, at a glance (spec §9 run/failures): the records
// of a level at or above the request's (ERROR by default), and the records
// whose text holds an exception line at any level, grouped by their first
// line's text after its fields and the agent's name with numbers, ids,
// quoted strings and paths taken out (failurePattern).
//
// The index keeps no text, so a failure is known only by reading its
// record. Each file's failures are found once: a memo shared by the
// versions of a file (fileState.memo, new when the file is read again
// from its start) holds those of its records that can no longer change
// (every record but the last), so a request after an append reads only the
// records appended (a request below memoFloor, ERROR, reads for itself).
// Only records that can be failures are read: those of the level asked or
// above, those with continuation lines without the indent
// (a stack trace logback appended: its exception line is unindented; an
// indented line is the agent's own text), and a line before a file's first
// record. The run's failures at memoFloor are kept grouped (failTally,
// failtally.go), so a request after an append adds what was appended; a
// whole answer and its JSON are kept for the committed state they were
// made from (ix.commits), so asking again without a change costs no read
// and no writing at all. What of it a request asks for (fewer locations a
// group, one group: runls' own params) is cut from it (failuresview.go).

// FailuresRequest is a run/failures request. Empty strings are absent.
// MaxRecords and Pattern are runls' own (spec §9 is silent on a client
// asking for less; docs/choices.md): absent, the answer is §9's.
type FailuresRequest struct {
	Episode  string `json:"episode,omitempty"`
	Agent    string `json:"agent,omitempty"`
	MinLevel string `json:"minLevel,omitempty"`
	// MaxRecords bounds each group's Records, 0 to MaxFailureRecords
	// (counts stay whole); nil: MaxFailureRecords.
	MaxRecords *int `json:"maxRecords,omitempty"`
	// Pattern asks for the one group of that pattern, as an answer gave
	// it, wherever it ranks (not only among the best MaxFailureGroups);
	// no group has it: none.
	Pattern string `json:"pattern,omitempty"`
}

// FailuresResult is the run/failures result.
type FailuresResult struct {
	Groups []FailureGroup `json:"groups"`

	// enc is the answer's JSON, made once for an answer the index keeps
	// (failuresAnswer): asked again without a change, the answer costs
	// only its writing. nil: made at each MarshalJSON.
	enc *encodedOnce
}

type encodedOnce struct {
	once sync.Once
	data []byte
}

// MarshalJSON writes the result as run/failures answers it.
func (r FailuresResult) MarshalJSON() ([]byte, error) {
	return r.EncodedJSON(), nil
}

// EncodedJSON is the result's JSON, as MarshalJSON writes it. For an answer
// the index keeps it is made once and shared: the caller must not modify
// it.
func (r *FailuresResult) EncodedJSON() []byte {
	if r == nil {
		return []byte("null")
	}
	if r.enc == nil {
		return appendFailures(nil, r.Groups)
	}
	r.enc.once.Do(func() { r.enc.data = appendFailures(make([]byte, 0, 64<<10), r.Groups) })
	return r.enc.data
}

// FailureGroup is the records of one pattern. Records holds at most
// MaxFailureRecords of them, in time order (then path, then line); Count
// counts them all. First and Last are the earliest and latest time as
// written, null when no record of the group has one.
type FailureGroup struct {
	Pattern  string     `json:"pattern"`
	Count    int        `json:"count"`
	Agents   []string   `json:"agents"`
	Episodes []string   `json:"episodes"`
	First    *string    `json:"first"`
	Last     *string    `json:"last"`
	Records  []Location `json:"records"`

	// Paths are the records' files (absolute), Records' order.
	Paths []string `json:"-"`
}

// Bounds of a run/failures answer (spec §9).
const (
	MaxFailureGroups  = 200
	MaxFailureRecords = 100
)

// Validate checks a request's fields, returning a *FieldError.
func (r FailuresRequest) Validate() error {
	_, _, err := r.parse()
	return err
}

type failuresQuery struct {
	epNum    string
	agent    string
	minLevel recordformat.Level
}

// parse reads the request as the failures it asks about (q) and what of
// them the answer holds (v).
func (r FailuresRequest) parse() (q failuresQuery, v failuresView, err error) {
	q = failuresQuery{agent: r.Agent, minLevel: recordformat.Error}
	v = failuresView{maxRecords: MaxFailureRecords, pattern: r.Pattern}
	if r.Episode != "" {
		n, ok := EpisodeNumber(r.Episode)
		if !ok {
			return q, v, &FieldError{"episode", r.Episode, "want episode-N, N decimal digits"}
		}
		q.epNum = n
	}
	if r.Agent != "" && !ValidAgent(r.Agent) {
		return q, v, &FieldError{"agent", r.Agent, `an agent folder name: no "/" or "\", not "." or ".."`}
	}
	if r.MinLevel != "" {
		lv, ok := levelByName[strings.ToUpper(r.MinLevel)]
		if !ok {
			return q, v, &FieldError{"minLevel", r.MinLevel, "want TRACE, DEBUG, INFO, WARN or ERROR"}
		}
		q.minLevel = lv
	}
	if r.MaxRecords != nil {
		if n := *r.MaxRecords; n < 0 || n > MaxFailureRecords {
			return q, v, &FieldError{"maxRecords", strconv.Itoa(n), fmt.Sprintf("want 0 to %d locations a group", MaxFailureRecords)}
		}
		v.maxRecords = *r.MaxRecords
	}
	return q, v, nil
}

// Failures answers a run/failures request from the index, brought up to
// date first as a search is (spec §7).
func (ix *Index) Failures(ctx context.Context, req FailuresRequest) (FailuresResult, error) {
	return viewed(ctx, ix, "listing failures", func() (FailuresResult, error) { return ix.failuresView(ctx, req) })
}

func (ix *Index) failuresView(ctx context.Context, req FailuresRequest) (FailuresResult, error) {
	q, v, err := req.parse()
	if err != nil {
		return FailuresResult{}, err
	}
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return FailuresResult{}, err
	}
	res, err := ix.failures(ctx, q, v)
	if errors.Is(err, ErrChanged) {
		if _, err := ix.Refresh(ctx, nil); err != nil {
			return FailuresResult{}, err
		}
		res, err = ix.failures(ctx, q, v)
	}
	return res, err
}

// failuresAnswer is the last answer made, for the committed state it was
// made from, and the whole run's failures grouped (failTally), kept up to
// date as files grow.
type failuresAnswer struct {
	mu      sync.Mutex
	commits uint64
	q       failuresQuery
	res     *FailuresResult         // §9's answer to q
	found   []fileFailures          // what res was made from, for a group it does not hold
	views   map[int]*FailuresResult // res with fewer records a group, by their bound
	// tallies of the run's failures at ERROR (the default request) and at
	// WARN (made when first asked for); nil: none yet.
	tallies map[recordformat.Level]*failTally
}

// failMemo holds the failures found among a file's records that can no
// longer change: records [0, upTo) of every version from the one it was
// filled from on. Shared by the versions of a file (its growth); a file
// read again from its start gets a new one.
type failMemo struct {
	mu      sync.Mutex
	upTo    int
	entries []failEntry // by record

	// The last record as last read: its index and how far the file was
	// read then, and what it was, so that an unchanged file is not read
	// again.
	lastRec   int
	lastPos   int64
	lastFound []failEntry
	lastSet   bool
}

// failEntry is one record that is a failure at level floor or above, or
// holds an exception line (level then below floor, or none).
type failEntry struct {
	rec       int32
	level     recordformat.Level
	exception bool // it holds an exception line
	timed     bool // the record has a time (it is no line before a file's first record)
	dotMillis bool // its time is written with .SSS
	key       int64
	rng       Range
	pattern   string
}

// memoFloor is the level the memo of failures keeps (the default
// request's): records at it or above and those holding an exception line.
// A run's WARN records are many (363,000 at 1 GB against 182,000 ERROR):
// they are kept apart (fileMemo.warnings), and only once a request asks for
// them. A request below WARN reads the files for itself.
const memoFloor = recordformat.Error

func (ix *Index) failures(ctx context.Context, q failuresQuery, v failuresView) (FailuresResult, error) {
	commits := ix.state.Commits.Load()
	ans := &ix.failAnswer
	ans.mu.Lock()
	defer ans.mu.Unlock()
	if ans.res == nil || ans.commits != commits || ans.q != q {
		if err := ix.answerFailures(ctx, q, commits); err != nil {
			return FailuresResult{}, err
		}
	}
	if res, ok := ans.view(v); ok {
		return res, nil
	}
	// A group the answer does not hold: grouped anew, that pattern's
	// failures only, from what the answer was made of (kept when the memos
	// hold it; below them, read again).
	found := ans.found
	if found == nil {
		var err error
		if found, _, err = ix.gatherFailures(ctx, q); err != nil {
			return FailuresResult{}, err
		}
	}
	res := freshFailures(ix.root, found, q.minLevel, v.pattern)
	res.Groups = trimGroups(res.Groups, v.maxRecords)
	return res, nil
}

// answerFailures makes §9's answer to q for the committed state commits
// and keeps it (ix.failAnswer, whose lock the caller holds).
func (ix *Index) answerFailures(ctx context.Context, q failuresQuery, commits uint64) error {
	ans := &ix.failAnswer
	found, memos, err := ix.gatherFailures(ctx, q)
	if err != nil {
		return err
	}
	var res FailuresResult
	if memos && q.epNum == "" && q.agent == "" {
		// The run at a kept level: its tally takes what the files' memos
		// gained since it was last asked (an append: what was appended).
		t := ans.tallies[q.minLevel]
		if !t.follows(found) {
			t = newFailTally()
			if ans.tallies == nil {
				ans.tallies = map[recordformat.Level]*failTally{}
			}
			ans.tallies[q.minLevel] = t
		}
		res = t.update(ix.root, found)
	} else {
		res = freshFailures(ix.root, found, q.minLevel, "")
	}
	res.enc = &encodedOnce{}
	ans.commits, ans.q, ans.res, ans.found, ans.views = commits, q, &res, nil, nil
	if memos {
		// What the memos hold anyway; failures read for this request
		// alone (below WARN: most of a run's records) are not kept.
		ans.found = found
	}
	return nil
}

// gatherFailures returns the failures of the files q looks at, each file's
// in parts (fileFailures), and whether every part is a memo's.
func (ix *Index) gatherFailures(ctx context.Context, q failuresQuery) (found []fileFailures, memos bool, err error) {
	files, agents := ix.failureFiles(q)
	memos = q.minLevel == memoFloor || q.minLevel == recordformat.Warn
	for i, fs := range files {
		parts, err := ix.rb.fileFailures(ctx, fs, q.minLevel)
		if err != nil {
			return nil, false, err
		}
		for _, p := range parts {
			p.agent = agents[i]
			memos = memos && p.memo != nil
			found = append(found, p)
		}
	}
	return found, memos, nil
}

// failureFiles returns the record files the query looks at, by path
// byte-wise, and their agents' names.
func (ix *Index) failureFiles(q failuresQuery) ([]*corpus.File, []string) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var files []*corpus.File
	for _, fs := range ix.state.Files {
		if fs.Form.IsRecord() && !fs.Binary && (q.epNum == "" || fs.EpNum() == q.epNum) && (q.agent == "" || ix.state.Agents[fs.Agent] == q.agent) {
			files = append(files, fs)
		}
	}
	slices.SortFunc(files, func(a, b *corpus.File) int { return strings.Compare(a.Rel, b.Rel) })
	agents := make([]string, len(files))
	for i, fs := range files {
		agents[i] = ix.state.Agents[fs.Agent]
	}
	return files, agents
}

// fileFailures returns the failures of fs at level floor or above (and the
// records that hold an exception line), in parts: each memo's (the records
// before the last, and the last: from the memo, and what it does not cover
// read now), or, below what the memos keep, one part read now.
func (rb *readBack) fileFailures(ctx context.Context, fs *corpus.File, floor recordformat.Level) ([]fileFailures, error) {
	t := fs.Records()
	n := t.Len()
	if n == 0 {
		return nil, nil
	}
	if memoOf(fs) == nil || floor < recordformat.Warn {
		all, err := rb.scanFailures(ctx, fs, 0, n, min(floor, memoFloor), false)
		return []fileFailures{{fs: fs, kept: all}}, err
	}
	parts := []fileFailures{{fs: fs, memo: &memoOf(fs).failures}}
	if floor == recordformat.Warn {
		parts = append(parts, fileFailures{fs: fs, memo: &memoOf(fs).warnings, warnings: true})
	}
	for i := range parts {
		var err error
		if parts[i].kept, parts[i].last, err = rb.memoFailures(ctx, fs, parts[i].memo, parts[i].warnings); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// memoFailures returns the failures m keeps of fs (warnings: WARN records
// without an exception line; else those of memoFloor), in two parts: the
// records before the last, and the last.
func (rb *readBack) memoFailures(ctx context.Context, fs *corpus.File, m *failMemo, warnings bool) (kept, last []failEntry, err error) {
	n := fs.Records().Len()
	m.mu.Lock()
	defer m.mu.Unlock()
	if final := n - 1; m.upTo < final {
		more, err := rb.scanFailures(ctx, fs, m.upTo, final, memoFloor, warnings)
		if err != nil {
			return nil, nil, err
		}
		m.entries, m.upTo = append(m.entries, more...), final
	}
	// The memo may hold records of a later version than fs: they are not
	// fs's (yet).
	end, _ := slices.BinarySearchFunc(m.entries, int32(n-1), func(e failEntry, rec int32) int { return int(e.rec - rec) })
	if !m.lastSet || m.lastRec != n-1 || m.lastPos != fs.ReadPos {
		found, err := rb.scanFailures(ctx, fs, n-1, n, memoFloor, warnings)
		if err != nil {
			return nil, nil, err
		}
		m.lastRec, m.lastPos, m.lastFound, m.lastSet = n-1, fs.ReadPos, found, true
	}
	return m.entries[:end:end], m.lastFound, nil
}

// scanFailures reads records [from, to) of fs that can be failures at level
// floor or above (warnings: WARN records without an exception line) and
// returns those that are, in record order.
func (rb *readBack) scanFailures(ctx context.Context, fs *corpus.File, from, to int, floor recordformat.Level, warnings bool) ([]failEntry, error) {
	t := fs.Records()
	var cands []int
	spans := t.Spans()
	si, _ := slices.BinarySearchFunc(spans, t.Line(from), func(s records.Span, line uint32) int { return int(s.First) - int(line) })
	for i := from; i < to; i++ {
		meta := t.Meta(i)
		lv := records.MetaLevel(meta)
		cand := (lv != recordformat.None && lv >= floor) || records.MetaKind(meta) == records.KindBeforeFirst
		if warnings {
			if lv == recordformat.Warn {
				cands = append(cands, i)
			}
			continue
		}
		last := t.Last(i)
		for si < len(spans) && spans[si].First <= last {
			cand = cand || spans[si].First > t.Line(i)
			si++
		}
		if !cand && i == t.Len()-1 && t.Last(i) > t.Line(i) {
			cand = true // the last record's span may not be listed yet
		}
		if cand {
			cands = append(cands, i)
		}
	}
	picks := make([]records.Pick, len(cands))
	for k, i := range cands {
		picks[k] = records.Pick{Rec: i}
	}
	var out []failEntry
	for _, st := range records.Stretches([]records.File{{Table: t}}, picks) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lines, err := rb.readLines(ctx, fs, st.From, st.To)
		if err != nil {
			return nil, err
		}
		rt := &recordsText{fs: fs, from: st.First, firstRow: st.From, lines: lines}
		for _, k := range st.Picks {
			i := cands[k]
			r, err := rt.record(i - st.First)
			if err != nil {
				return nil, err
			}
			if e, ok := rb.failureOf(t, i, r, floor, warnings); ok {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// failureOf makes the entry of record i, read back as r, when it is a
// failure at level floor or above or holds an exception line (warnings: when
// it is a WARN record without one).
func (rb *readBack) failureOf(t *records.Table, i int, r recordText, floor recordformat.Level, warnings bool) (failEntry, bool) {
	meta := t.Meta(i)
	e := failEntry{rec: int32(i), level: records.MetaLevel(meta), key: t.Time(i), rng: r.rng}
	cont := r.lines[1:]
	if r.head.Kind == recordformat.BeforeFirst {
		cont = r.lines // the line is no record's first line: it may be a trace's
	}
	for _, l := range cont {
		if !bytes.HasPrefix(l, []byte("  ")) {
			if _, ok := recordformat.ThrownName(l); ok {
				e.exception = true
				break
			}
		}
	}
	if warnings {
		if e.exception || e.level != recordformat.Warn {
			return e, false
		}
	} else if !e.exception && (e.level == recordformat.None || e.level < floor) {
		return e, false
	}
	var text string
	if rb.masker == nil {
		text = r.firstEvidence() // a stack trace's lines are not read for nothing
	} else {
		text = rb.maskText(r.evidence()) // masked as a whole record, as it was indexed
	}
	head, _, _ := strings.Cut(text, "\n")
	if r.head.Kind != recordformat.BeforeFirst {
		_, head, _ = strings.Cut(head, " ") // the agent's name
	}
	e.pattern = failurePattern(head)
	e.timed = r.head.Kind != recordformat.BeforeFirst
	e.dotMillis = meta&records.MetaDotMillis != 0
	return e, true
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sortedEpisodes lists episode folder names in numeric order.
func sortedEpisodes(m map[string]bool) []string {
	out := slices.Collect(mapKeys(m))
	slices.SortFunc(out, func(a, b string) int {
		na, _ := EpisodeNumber(a)
		nb, _ := EpisodeNumber(b)
		if c := corpus.CompareEpisodeNumbers(na, nb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// firstEvidence is the evidence text of the record's first line (the first
// line of evidence, and more where a JSON line's prose holds "\n").
func (r recordText) firstEvidence() string {
	if r.head.JSON {
		return recordformat.ValidText(recordformat.Prose(nil, r.lines[0]))
	}
	return recordformat.ValidText(r.lines[0][r.head.Evidence:])
}
