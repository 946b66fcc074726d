package retriever

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
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
	return viewed(ctx, ix, "making an outline", func() (Outline, error) { return ix.outline(ctx, path, limit) })
}

func (ix *Index) outline(ctx context.Context, path string, limit int) (Outline, error) {
	var out Outline
	if err := ix.freshIfWatched(ctx); err != nil {
		return out, err
	}
	fs := ix.recordFile(path)
	if fs == nil || fs.Records().Len() == 0 {
		return out, nil
	}
	t := fs.Records()
	n := t.Len()
	if limit > 0 && limit < n {
		n = limit
		out.More = t.Len() - limit
		out.Rest = Range{Start: Position{Line: int(t.Line(n))}, End: Position{Line: int(t.Lines() - 1), Character: int(t.EndUnits())}}
	}
	text, err := ix.rb.readRecords(ctx, fs, 0, n)
	if err != nil {
		return Outline{}, err
	}
	for i := 0; i < n; i++ {
		r, err := text.record(i)
		if err != nil {
			return Outline{}, err
		}
		rec := OutlineRecord{Name: ix.rb.recordName(r), Detail: ix.rb.recordDetail(r), Range: r.rng, Selection: r.first}
		if t.NewRun(i) {
			run := OutlineRun{Range: r.rng, Selection: r.first}
			if c := t.Conv(i); c != 0 {
				name := ix.rb.maskText(ix.state.Convs.Name(c))
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
	out, _ := viewed(context.Background(), ix, "making folds", func() ([]Fold, error) { return ix.folds(path), nil })
	return out
}

func (ix *Index) folds(path string) []Fold {
	fs := ix.recordFile(path)
	if fs == nil {
		return nil
	}
	folds := records.Folds(fs.Records())
	out := make([]Fold, len(folds))
	for i, f := range folds {
		out[i] = Fold{StartLine: int(f.First), EndLine: int(f.Last)}
	}
	return out
}

// RecordAt returns the facts of the record that holds line n (0-based) of a
// record file of the run, with whether it is evidence for req (a valid
// request: the settings); nil when no record holds the line or the file is
// not a record file of the run. With a healthy watcher the index is brought
// up to date first (freshIfWatched).
func (ix *Index) RecordAt(ctx context.Context, path string, n int, req Request) (*RecordFacts, error) {
	return viewed(ctx, ix, "reading a record", func() (*RecordFacts, error) { return ix.recordAt(ctx, path, n, req) })
}

func (ix *Index) recordAt(ctx context.Context, path string, n int, req Request) (*RecordFacts, error) {
	if err := ix.freshIfWatched(ctx); err != nil {
		return nil, err
	}
	fs := ix.recordFile(path)
	if fs == nil || n < 0 || int64(n) > int64(^uint32(0)) {
		return nil, nil
	}
	t := fs.Records()
	i := t.RecordAt(uint32(n))
	if i < 0 {
		return nil, nil
	}
	text, err := ix.rb.readRecords(ctx, fs, i, i+1)
	if err != nil {
		return nil, err
	}
	r, err := text.record(0)
	if err != nil {
		return nil, err
	}
	ix.mu.RLock()
	agent := ix.state.Agents[fs.Agent]
	ix.mu.RUnlock()
	facts := &RecordFacts{Range: r.rng, Agent: agent, Episode: fs.Episode(), Reading: ReadingNote,
		BeforeFirst: r.head.Kind == recordformat.BeforeFirst}
	head := r.lines[0]
	if r.head.Kind == recordformat.Foreign {
		facts.Time = recordformat.KeyText(r.head.Time) // "" without a time
		facts.Level = records.LevelName(r.head.Level)
	} else if !facts.BeforeFirst {
		facts.Time = string(head[:recordformat.StampLen(head)])
		facts.State = ix.rb.maskText(recordformat.ValidText(head[r.head.StateStart-r.head.Start : r.head.StateEnd-r.head.Start]))
		if lv := r.head.Level; lv != recordformat.None {
			facts.Level = records.LevelName(lv)
		}
	}
	if c := t.Conv(i); c != 0 {
		name := ix.rb.maskText(ix.state.Convs.Name(c))
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
		facts.LeftOut = records.LevelName(lv)
	}
	if at, ok := recordformat.KeyTime(t.Time(i)); ok {
		for j := i - 1; j >= 0; j-- {
			if t.Conv(j) != t.Conv(i) || t.Time(j) == recordformat.NoTime {
				continue
			}
			before, _ := recordformat.KeyTime(t.Time(j))
			d := at.Sub(before)
			facts.Since = &d
			break
		}
	}
	facts.Reason = verdict(req, newFilter(&ix.state, ix.interpreter, req), fs, t, i, agent)
	facts.Evidence = facts.Reason == ""
	return facts, nil
}

// verdict tells why record i of fs is not evidence for req (f its rules),
// or "" when it is: what indexing made of it, then the rules of spec §5,
// read for the record as the search reads them for its pieces
// (evidenceFilter.evidence).
func verdict(req Request, f *filter, fs *corpus.File, t *records.Table, i int, agent string) string {
	switch records.MetaOutcome(t.Meta(i)) {
	case records.OutcomeLeftOut:
		return ReasonLeftOut
	case records.OutcomeMasked:
		return ReasonMasked
	case records.OutcomeNoTerms:
		return ReasonNoTerms
	}
	if req.Agent != "" && req.Agent != agent {
		return ReasonOtherAgent
	}
	current := f.episode != "" && fs.EpNum() == f.episode
	return ruleReason(f, current, fs.Conversational(), t.Unfielded(i), t.Conv(i))
}

// recordName is an outline record's name (spec §11).
func (rb *readBack) recordName(r recordText) string {
	var first string
	if rb.masker != nil || r.head.JSON {
		// Masked as a whole record, as it was indexed (a key block over
		// several lines is one span).
		text := r.evidence()
		if rb.masker != nil {
			text = rb.maskText(text)
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
func (rb *readBack) recordDetail(r recordText) string {
	switch r.head.Kind {
	case recordformat.BeforeFirst:
		return ""
	case recordformat.Foreign:
		return records.LevelName(r.head.Level) // no episode state (spec §2)
	}
	head := r.lines[0]
	state := rb.maskText(recordformat.ValidText(head[r.head.StateStart-r.head.Start : r.head.StateEnd-r.head.Start]))
	if r.head.Level == recordformat.None {
		return state
	}
	return records.LevelName(r.head.Level) + " · " + state
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
