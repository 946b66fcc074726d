package retriever

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"runls/masking"
	"runls/recordformat"
)

// Record structure for an editor (spec §11): the outline of a record file,
// its folds, and the facts of the record under a line, with whether it is
// evidence for a request. All come from the file's record table and its text
// as the index read it from disk, whether an editor has the file open or
// not; for a plain file they are empty.

// Outline is a record file's conversation runs (maximal runs of consecutive
// records with the same conversation field; unfielded records form runs of
// their own), each with its records, in file order.
type Outline struct {
	Runs []OutlineRun
	// More counts the records past the limit, which are not listed; Rest
	// runs from the first of them to the end of the file.
	More int
	Rest Range
}

// OutlineRun is one conversation run.
type OutlineRun struct {
	Conversation *string // as written ("-" included); nil: no conversation field
	Range        Range   // from its first record's start to its last record's end
	Selection    Range   // its first record's first line
	Records      []OutlineRecord
}

// OutlineRecord is one record: Name is `HH:mm:ss <first line of its evidence
// text>` (white space runs folded, at most MaxNameUnits UTF-16 units),
// Detail its level and episode state.
type OutlineRecord struct {
	Name, Detail string
	Range        Range // the whole record
	Selection    Range // its first line
}

// MaxNameUnits is the longest record name of an outline, in UTF-16 units.
const MaxNameUnits = 100

// Fold is a stretch of lines an editor can fold: a record of several lines,
// or a conversation run of several records.
type Fold struct {
	StartLine, EndLine int
}

// RecordFacts is what is known of one record (spec §11 hover).
type RecordFacts struct {
	Range   Range // the whole record
	Agent   string
	Episode string
	// Time is as written, "" for a line before the file's first record;
	// Level is "" for history records and that line.
	Time, Level, State string
	Conversation       *string // as written; nil: no conversation field
	BeforeFirst        bool    // a line before the file's first record
	Reading            Reading // under the interpreter; leftOut included
	// LeftOut says why the record is left out ("DEBUG", "TRACE", or the
	// interpreter's rule), "" when it is not.
	LeftOut string
	// Since is the time since the previous record of the same conversation
	// (or, for an unfielded record, the previous unfielded one) in the file.
	Since    *time.Duration
	Evidence bool
	Reason   string // why it is not evidence (Reason*), "" when it is
}

// Why a record is not evidence for a request (spec §11), the first that
// applies in this order.
const (
	ReasonLeftOut           = "left-out"
	ReasonMasked            = "masked"
	ReasonNoTerms           = "no-terms"
	ReasonOtherAgent        = "other-agent"
	ReasonScope             = "scope"
	ReasonNoContext         = "no-context"
	ReasonUnfielded         = "unfielded"
	ReasonOtherConversation = "other-conversation"
)

// ErrChanged is returned when a file's text no longer matches what was
// indexed of it (it was rewritten since the last read): the next update
// reads it again.
var ErrChanged = errors.New("the file changed since it was indexed")

// Outline returns the outline of a record file of the run (by absolute
// path), listing at most limit records (0: all); with a healthy watcher, of
// the file as it is now (freshIfWatched).
func (ix *Index) Outline(ctx context.Context, path string, limit int) (Outline, error) {
	var out Outline
	if err := ix.freshIfWatched(ctx); err != nil {
		return out, err
	}
	fs := ix.recordFile(path)
	if fs == nil || fs.records().len() == 0 {
		return out, nil
	}
	t := fs.records()
	n := t.len()
	if limit > 0 && limit < n {
		n = limit
		out.More = t.len() - limit
		out.Rest = Range{Start: Position{Line: int(t.recLine(n))}, End: Position{Line: int(t.lines - 1), Character: int(t.endUnits)}}
	}
	text, err := ix.readRecords(ctx, fs, 0, n)
	if err != nil {
		return Outline{}, err
	}
	for i := 0; i < n; i++ {
		r, err := text.record(i)
		if err != nil {
			return Outline{}, err
		}
		rec := OutlineRecord{Name: ix.recordName(r), Detail: ix.recordDetail(r), Range: r.rng, Selection: r.first}
		if i == 0 || t.recConv(i) != t.recConv(i-1) || t.unfielded(i) != t.unfielded(i-1) {
			run := OutlineRun{Range: r.rng, Selection: r.first}
			if c := t.recConv(i); c != 0 {
				name := ix.maskText(ix.convName(c))
				run.Conversation = &name
			}
			out.Runs = append(out.Runs, run)
		}
		run := &out.Runs[len(out.Runs)-1]
		run.Range.End = r.rng.End
		run.Records = append(run.Records, rec)
	}
	return out, nil
}

// Folds returns the folds of a record file of the run: one per record of
// more than one line, one per conversation run of more than one record, in
// order of their first line, the longer first. It reads no file.
func (ix *Index) Folds(path string) []Fold {
	fs := ix.recordFile(path)
	if fs == nil {
		return nil
	}
	t := fs.records()
	n := t.len()
	out := make([]Fold, 0, n/4)
	runEnd := 0 // the record after the current run
	for i := 0; i < n; i++ {
		if i == runEnd {
			runEnd = i + 1
			for runEnd < n && t.recConv(runEnd) == t.recConv(i) && t.unfielded(runEnd) == t.unfielded(i) {
				runEnd++
			}
			if runEnd-i > 1 {
				out = append(out, Fold{StartLine: int(t.recLine(i)), EndLine: int(t.recLast(runEnd - 1))})
			}
		}
		if first, last := t.recLine(i), t.recLast(i); last > first {
			out = append(out, Fold{StartLine: int(first), EndLine: int(last)})
		}
	}
	return out
}

// RecordAt returns the facts of the record that holds line n (0-based) of a
// record file of the run, with whether it is evidence for req (a valid
// request: the settings); nil when no record holds the line or the file is
// not a record file of the run. With a healthy watcher the index is brought
// up to date first (freshIfWatched).
func (ix *Index) RecordAt(ctx context.Context, path string, n int, req Request) (*RecordFacts, error) {
	if err := ix.freshIfWatched(ctx); err != nil {
		return nil, err
	}
	fs := ix.recordFile(path)
	if fs == nil || n < 0 || int64(n) > int64(^uint32(0)) {
		return nil, nil
	}
	t := fs.records()
	i := t.recordAt(uint32(n))
	if i < 0 {
		return nil, nil
	}
	text, err := ix.readRecords(ctx, fs, i, i+1)
	if err != nil {
		return nil, err
	}
	r, err := text.record(0)
	if err != nil {
		return nil, err
	}
	ix.mu.RLock()
	agent := ix.agents[fs.agent]
	ix.mu.RUnlock()
	facts := &RecordFacts{Range: r.rng, Agent: agent, Episode: fs.episode, Reading: ReadingNote,
		BeforeFirst: r.head.Kind == recordformat.BeforeFirst}
	head := r.lines[0]
	if r.head.Kind == recordformat.Foreign {
		facts.Time = recordformat.KeyText(r.head.Time) // "" without a time
		facts.Level = levelNames[r.head.Level]
	} else if !facts.BeforeFirst {
		facts.Time = string(head[:recordformat.StampLen(head)])
		facts.State = ix.maskText(recordformat.ValidText(head[r.head.StateStart-r.head.Start : r.head.StateEnd-r.head.Start]))
		if lv := r.head.Level; lv != recordformat.None {
			facts.Level = levelNames[lv]
		}
	}
	if c := t.recConv(i); c != 0 {
		name := ix.maskText(ix.convName(c))
		facts.Conversation = &name
	}
	if ix.interpreter != nil {
		reading, _, _, rule := ix.interpreter.readRule(r.evidence())
		facts.Reading = reading
		if reading == ReadingLeftOut {
			facts.LeftOut = "rule " + strconv.Itoa(rule+1) + " (" + ix.interpreter.rules[rule].re.String() + ")"
		}
	}
	if lv := r.head.Level; lv.LeftOut() {
		facts.LeftOut = levelNames[lv]
	}
	if at, ok := recordformat.KeyTime(t.recTime(i)); ok {
		for j := i - 1; j >= 0; j-- {
			if t.recConv(j) != t.recConv(i) || t.recTime(j) == recordformat.NoTime {
				continue
			}
			before, _ := recordformat.KeyTime(t.recTime(j))
			d := at.Sub(before)
			facts.Since = &d
			break
		}
	}
	facts.Reason = ix.verdict(req, fs, t, i, agent)
	facts.Evidence = facts.Reason == ""
	return facts, nil
}

// verdict tells why record i of fs is not evidence for req, or "" when it
// is: what indexing made of it, then the rules of spec §5, read for the
// record as the search reads them for its pieces (Index.evidence).
func (ix *Index) verdict(req Request, fs *fileState, t *recordTable, i int, agent string) string {
	switch metaOutcome(t.recMeta(i)) {
	case outcomeLeftOut:
		return ReasonLeftOut
	case outcomeMasked:
		return ReasonMasked
	case outcomeNoTerms:
		return ReasonNoTerms
	}
	if req.Agent != "" && req.Agent != agent {
		return ReasonOtherAgent
	}
	f := ix.newFilter(req)
	current := f.episode != "" && fs.epNum == f.episode
	return ruleReason(f, current, fs.conversational(), t.unfielded(i), t.recConv(i))
}

var levelNames = [...]string{
	recordformat.None: "", recordformat.Trace: "TRACE", recordformat.Debug: "DEBUG",
	recordformat.Info: "INFO", recordformat.Warn: "WARN", recordformat.Error: "ERROR",
}

// recordName is an outline record's name (spec §11).
func (ix *Index) recordName(r recordText) string {
	var first string
	if ix.masker != nil || r.head.JSON {
		// Masked as a whole record, as it was indexed (a key block over
		// several lines is one span).
		text := r.evidence()
		if ix.masker != nil {
			spans, _ := ix.masker.Mask(text)
			text, _ = masking.Apply(text, spans)
		}
		first, _, _ = strings.Cut(text, "\n")
	} else {
		first = recordformat.ValidText(r.lines[0][r.head.Evidence:])
	}
	name := strings.Join(strings.Fields(first), " ")
	switch {
	case r.head.Kind == recordformat.Foreign:
		if when := recordformat.KeyText(r.head.Time); when != "" {
			name = strings.TrimSpace(when[11:19] + " " + name)
		}
	case r.head.Kind != recordformat.BeforeFirst:
		name = strings.TrimSpace(string(r.lines[0][11:19]) + " " + name)
	}
	if name == "" {
		name = "(blank)" // LSP wants a name
	}
	return cutUnits(name, MaxNameUnits)
}

// recordDetail is the level and the episode state: "INFO · running".
func (ix *Index) recordDetail(r recordText) string {
	switch r.head.Kind {
	case recordformat.BeforeFirst:
		return ""
	case recordformat.Foreign:
		return levelNames[r.head.Level] // no episode state (spec §2)
	}
	head := r.lines[0]
	state := ix.maskText(recordformat.ValidText(head[r.head.StateStart-r.head.Start : r.head.StateEnd-r.head.Start]))
	if r.head.Level == recordformat.None {
		return state
	}
	return levelNames[r.head.Level] + " · " + state
}

// cutUnits cuts s to at most n UTF-16 units, the last of them "…" when cut.
func cutUnits(s string, n int) string {
	if len(s) <= n { // at most one unit a byte
		return s
	}
	units := 0
	for i, r := range s {
		u := recordformat.RuneUnits(r)
		if units+u > n-1 {
			rest := recordformat.UTF16Len([]byte(s[i:]))
			if units+rest <= n {
				return s
			}
			return s[:i] + "…"
		}
		units += u
	}
	return s
}

// maskText masks a text taken from a file, when masking is on.
func (ix *Index) maskText(s string) string {
	if ix.masker == nil {
		return s
	}
	spans, _ := ix.masker.Mask(s)
	out, _ := masking.Apply(s, spans)
	return out
}

// recordsText is the text of records [from, to) of a file, read back.
type recordsText struct {
	fs       *fileState
	from     int
	firstRow uint32
	lines    [][]byte // the lines, without their line ends
}

// recordText is one record read back: its lines, its first line parsed,
// its range and its first line's.
type recordText struct {
	form   recordformat.Form
	layout recordformat.Layout
	lines  [][]byte
	head   recordformat.Line // offsets within lines[0]
	rng    Range
	first  Range
}

// readRecords reads the lines of records [from, to) of fs.
func (ix *Index) readRecords(ctx context.Context, fs *fileState, from, to int) (*recordsText, error) {
	t := fs.records()
	first, last := t.recLine(from), t.recLast(to-1)
	lines, err := ix.readLines(ctx, fs, first, last+1)
	if err != nil {
		return nil, err
	}
	return &recordsText{fs: fs, from: from, firstRow: first, lines: lines}, nil
}

// record returns record i of those read (0: the first), checked against
// the table.
func (rt *recordsText) record(i int) (recordText, error) {
	t := rt.fs.records()
	k := rt.from + i
	lo, hi := t.recLine(k)-rt.firstRow, t.recLast(k)-rt.firstRow+1
	r := recordText{form: rt.fs.form, layout: rt.fs.layout, lines: rt.lines[lo:hi]}
	r.head = r.parser(false).Next(r.lines[0], 0)
	kind, key := kindFielded, r.head.Time
	switch r.head.Kind {
	case recordformat.Unfielded:
		kind = kindUnfielded
	case recordformat.BeforeFirst:
		kind = kindBeforeFirst
	case recordformat.Foreign:
		kind = kindForeign
	}
	if kind == kindFielded || kind == kindUnfielded {
		key = recordformat.TimeKey(r.lines[0])
	}
	m := t.recMeta(k)
	if kind != metaKind(m) || r.head.Level != metaLevel(m) || (kind != kindBeforeFirst && key != t.recTime(k)) {
		return r, ErrChanged
	}
	line := int(t.recLine(k))
	lastLine := r.lines[len(r.lines)-1]
	r.first = Range{Start: Position{Line: line}, End: Position{Line: line, Character: recordformat.UTF16Len(r.lines[0])}}
	r.rng = Range{Start: r.first.Start, End: Position{Line: line + len(r.lines) - 1, Character: recordformat.UTF16Len(lastLine)}}
	return r, nil
}

// evidence is the record's evidence text (spec §2), its lines joined with
// "\n".
func (r recordText) evidence() string {
	var sb strings.Builder
	p := r.parser(true)
	for i, l := range r.lines {
		line := r.head
		if i > 0 {
			sb.WriteByte('\n')
			line = p.Next(l, 0)
		}
		if line.JSON {
			sb.WriteString(recordformat.ValidText(recordformat.Prose(nil, l)))
			continue
		}
		sb.WriteString(recordformat.ValidText(l[line.Evidence:]))
	}
	return sb.String()
}

// parser is a parser of the record's file, in its layout, at a record's
// first line or (inRecord) after it.
func (r recordText) parser(inRecord bool) *recordformat.Parser {
	p := recordformat.Resume(r.form, inRecord)
	p.SetLayout(r.layout)
	return p
}

// readLines reads lines [from, to) of a file through its line index, in one
// pass, without their line ends. A file that ends before line to-1 has
// changed since it was read.
func (ix *Index) readLines(ctx context.Context, fs *fileState, from, to uint32) ([][]byte, error) {
	k := int(from / lineIndexEvery)
	if k >= len(fs.lineIndex) || to <= from {
		return nil, ErrChanged
	}
	h, err := ix.handles.acquire(ix, fs)
	if err != nil {
		return nil, err
	}
	defer ix.handles.release(h)
	skip := int(from % lineIndexEvery)
	want := int(to - from)
	var buf []byte
	lines := make([][]byte, 0, want)
	off := fs.lineIndex[k]
	chunk := make([]byte, 64<<10)
	start := 0 // where the line being looked for starts in buf
	for len(lines) < want {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, rerr := h.f.ReadAt(chunk, off)
		off += int64(m)
		buf = append(buf, chunk[:m]...)
		for len(lines) < want {
			nl := bytes.IndexByte(buf[start:], '\n')
			if nl < 0 {
				break
			}
			end := start + nl
			if skip > 0 {
				skip--
			} else {
				lines = append(lines, bytes.TrimSuffix(buf[start:end], []byte{'\r'}))
			}
			start = end + 1
		}
		if rerr != nil || m == 0 {
			if len(lines) == want-1 && skip == 0 && start < len(buf) && (rerr == nil || errors.Is(rerr, io.EOF)) {
				// The file's last line, without a line end.
				lines = append(lines, buf[start:]) // a "\r" with no "\n" after it is text
				break
			}
			if len(lines) < want {
				return nil, ErrChanged
			}
		}
		if len(chunk) < 1<<20 {
			chunk = make([]byte, len(chunk)*2)
		}
	}
	// Lines cut before buf grew point into its earlier arrays, which hold
	// the same bytes.
	return lines, nil
}
