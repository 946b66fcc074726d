// Package recordformat parses the lines of a run's files (spec §2): the
// lines agents write with logback patterns, the lines of other log layouts
// (a foreign log: layout.go, foreign.go) and JSON lines (jsonline.go). It
// tells, for every line of a file, what the line is (a record start with or
// without the conversation field, a record start of another layout, an
// indented or unindented continuation, a line before the first record, a
// note), where its evidence text starts, and its time, level and role where
// it has them. The engine indexes from this parse and the diagnostics of the
// server and of `runls check` are made from it, so both agree by
// construction.
package recordformat

import (
	"bytes"
	"path/filepath"
)

// Form is the kind of file a line belongs to.
type Form uint8

const (
	// Plain files hold notes: every line is a record of its own.
	Plain Form = iota
	// History files hold `<date> <time> [<state>] [<conversation>] <agent> <message>` lines.
	History
	// Log files hold the same with a level after the time.
	Log
)

// FormOf tells a file's form by its name.
func FormOf(name string) Form {
	switch filepath.Ext(name) {
	case ".history":
		return History
	case ".log":
		return Log
	}
	return Plain
}

// IsRecord reports whether the form's lines are records (spec §1).
func (f Form) IsRecord() bool { return f != Plain }

// Kind is what a line is.
type Kind uint8

const (
	// Fielded starts a record that carries the conversation field.
	Fielded Kind = iota
	// Unfielded starts a record written without the conversation field.
	Unfielded
	// BeforeFirst is a line before a file's first record; it counts as an
	// unfielded record line of its own.
	BeforeFirst
	// Indented continues the record before it with the two-space indent.
	Indented
	// Unindented continues the record before it without the indent.
	Unindented
	// Note is a line of a plain file.
	Note
	// Foreign starts a record of a foreign log (another layout, §2); a line
	// before such a file's first record is one too, without a time.
	Foreign
	// Continued continues a record of a foreign log: no diagnostic is made
	// of it, whatever its indent.
	Continued
)

var kindNames = [...]string{"fielded", "unfielded", "before-first", "indented", "unindented", "note", "foreign", "continued"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// StartsRecord reports whether a line of this kind begins a record.
func (k Kind) StartsRecord() bool {
	return k == Fielded || k == Unfielded || k == BeforeFirst || k == Note || k == Foreign
}

// IsUnfielded reports whether the line is an unfielded record line (spec §2),
// which never enters evidence in its own episode.
func (k Kind) IsUnfielded() bool { return k == Unfielded || k == BeforeFirst }

// Level is a log record's level; None for history records and continuations.
type Level uint8

const (
	None Level = iota
	Trace
	Debug
	Info
	Warn
	Error
)

// LeftOut reports whether records at this level are left out (spec §3).
func (l Level) LeftOut() bool { return l == Trace || l == Debug }

// Line is one parsed line. Offsets are byte offsets into the data given to the
// parser; [Start, End) includes the line end, [Start, TextEnd) does not.
type Line struct {
	Kind       Kind
	Level      Level
	Start      int
	TextEnd    int
	End        int
	Evidence   int // start of the evidence text; it runs to TextEnd
	StateStart int // episode state, without brackets (record starts only)
	StateEnd   int
	ConvStart  int // conversation id, without brackets (Fielded only)
	ConvEnd    int
	// Time is the time key (time.go) of a record start of another layout
	// and of a JSON line's time field; NoTime for every other line. The
	// run's own record lines have theirs from TimeKey(line), which the
	// parser leaves to those who need it (most lines' time is never asked).
	Time int64
	// JSON: the line is one JSON object, whose evidence text is its prose
	// (Prose of [Start, TextEnd)), not the text from Evidence on; Role is
	// its transcript role.
	JSON bool
	Role Role
}

// Empty reports whether the line has no text at all.
func (l Line) Empty() bool { return l.TextEnd == l.Start }

// Parser reads lines one after another; it remembers whether a record has
// started, which decides what an unparsable line is.
type Parser struct {
	form     Form
	layout   Layout
	inRecord bool
}

// NewParser returns a parser at the start of a file of the given form, in
// the run's own layout.
func NewParser(form Form) *Parser { return &Parser{form: form} }

// Resume returns a parser in the middle of a file: inRecord tells whether a
// record started before the point it resumes at.
func Resume(form Form, inRecord bool) *Parser { return &Parser{form: form, inRecord: inRecord} }

// SetLayout makes the parser read a record file's lines in layout (Detect's
// answer); plain files keep their notes.
func (p *Parser) SetLayout(layout Layout) {
	if p.form.IsRecord() && layout < layoutCount {
		p.layout = layout
	}
}

// Layout is the layout the parser reads in.
func (p *Parser) Layout() Layout { return p.layout }

// InRecord reports whether a record has started.
func (p *Parser) InRecord() bool { return p.inRecord }

// Next parses the line that starts at data[start] (start < len(data)). A line
// ends after "\n"; "\r\n" ends it too and the "\r" is not text. A last line
// without a line end runs to the end of data.
func (p *Parser) Next(data []byte, start int) Line {
	l := Line{Start: start}
	end := indexByteFrom(data, start, '\n')
	if end < 0 {
		l.End, l.TextEnd = len(data), len(data)
	} else {
		l.End, l.TextEnd = end+1, end
		if end > start && data[end-1] == '\r' {
			l.TextEnd = end - 1
		}
	}
	text := data[start:l.TextEnd]
	l.Time = NoTime
	switch {
	case p.form == Plain:
		l.Kind, l.Evidence = Note, start
		p.jsonLine(&l, text)
	case p.layout != Own:
		p.foreign(&l, text)
	case len(text) >= 2 && text[0] == ' ' && text[1] == ' ' && p.inRecord:
		l.Kind, l.Evidence = Indented, start+2
		p.jsonLine(&l, text[2:])
	default:
		if r, ok := parseRecord(text, p.form == Log); ok {
			p.inRecord = true
			l.Level = r.level
			l.Evidence = start + r.evidence
			l.StateStart, l.StateEnd = start+r.stateStart, start+r.stateEnd
			if r.convEnd > 0 {
				l.Kind = Fielded
				l.ConvStart, l.ConvEnd = start+r.convStart, start+r.convEnd
			} else {
				l.Kind = Unfielded
			}
		} else {
			if p.inRecord {
				l.Kind, l.Evidence = Unindented, start
			} else {
				l.Kind, l.Evidence = BeforeFirst, start
			}
			p.jsonLine(&l, text)
		}
	}
	return l
}

// jsonLine marks a line that is one JSON object (spec §2 "JSON lines": a
// line of any agent file), with its time, level and role. A continuation
// line of the run's own layout keeps no time or level: it is no record
// start.
func (p *Parser) jsonLine(l *Line, text []byte) {
	if len(text) < 2 || (text[0] != '{' && text[0] != ' ' && text[0] != '\t') {
		return
	}
	if f, ok := JSONLine(text); ok {
		l.JSON, l.Role = true, f.Role
		if l.Kind == Note {
			l.Time, l.Level = f.Time, f.Level
		}
	}
}

// foreign parses a line of a foreign log: a record start where the
// layout's header starts the line, else a continuation of the record before
// (or, before the first, a record of its own with no time).
func (p *Parser) foreign(l *Line, text []byte) {
	l.Evidence = l.Start
	if p.layout == JSONLines {
		if f, ok := JSONLine(text); ok {
			p.inRecord = true
			l.Kind, l.JSON, l.Time, l.Level, l.Role = Foreign, true, f.Time, f.Level, f.Role
			return
		}
	} else if h, ok := p.layout.start(text); ok {
		p.inRecord = true
		l.Kind, l.Time, l.Level, l.Evidence = Foreign, h.time, h.level, l.Start+h.evidence
		return
	}
	if p.inRecord {
		l.Kind = Continued
	} else {
		l.Kind = Foreign
	}
}

// Parse parses every line of data as a whole file, in the run's own layout.
func Parse(form Form, data []byte) []Line { return ParseIn(form, Own, data) }

// ParseIn parses every line of data as a whole file in layout.
func ParseIn(form Form, layout Layout, data []byte) []Line {
	p := NewParser(form)
	p.SetLayout(layout)
	var lines []Line
	for start := 0; start < len(data); {
		l := p.Next(data, start)
		lines = append(lines, l)
		start = l.End
	}
	return lines
}

type recordFields struct {
	level                Level
	stateStart, stateEnd int
	convStart, convEnd   int
	evidence             int
}

// levels are the five level fields, each left-justified to five characters.
var levels = [...]struct {
	text  string
	level Level
}{{"TRACE", Trace}, {"DEBUG", Debug}, {"INFO ", Info}, {"WARN ", Warn}, {"ERROR", Error}}

// parseRecord parses a record start from the beginning of text:
// `yyyy-MM-dd HH:mm:ss[,SSS|.SSS] [LEVEL ][<state>] [[<conversation>] ]`.
func parseRecord(text []byte, withLevel bool) (recordFields, bool) {
	var r recordFields
	i := StampLen(text) // yyyy-MM-dd HH:mm:ss[,SSS|.SSS]
	if i == 0 || i >= len(text) || text[i] != ' ' {
		return r, false
	}
	i++
	if withLevel {
		if len(text) < i+6 || text[i+5] != ' ' {
			return r, false
		}
		found := false
		for _, lv := range levels {
			if string(text[i:i+5]) == lv.text {
				r.level, found = lv.level, true
				break
			}
		}
		if !found {
			return r, false
		}
		i += 6
	}
	// [<episode-state>] followed by a space
	if i >= len(text) || text[i] != '[' {
		return r, false
	}
	close := indexByteFrom(text, i+1, ']')
	if close < 0 || close+1 >= len(text) || text[close+1] != ' ' {
		return r, false
	}
	r.stateStart, r.stateEnd = i+1, close
	i = close + 2
	r.evidence = i
	// [<conversation>] followed by a space: the field of 0.18.6 on.
	if i < len(text) && text[i] == '[' {
		c := indexByteFrom(text, i+1, ']')
		if c > i+1 && c+1 < len(text) && text[c+1] == ' ' {
			r.convStart, r.convEnd = i+1, c
			r.evidence = c + 2
		}
	}
	return r, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func indexByteFrom(b []byte, from int, c byte) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return -1
}
