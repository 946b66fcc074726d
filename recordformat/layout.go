package recordformat

import "bytes"

// Layouts (spec §2 "Other layouts"): a record file is read in the run's own
// layout unless its first lines say it was written in another known one,
// a foreign log. The layout is decided per file, from its head (its first
// DetectLines lines), and kept for the whole file (a file that changes
// layout after them keeps the one it started with), as lnav detects a
// format per file from its first lines; a file read while it has fewer is
// decided again as they come (the retriever's layoutChanged), so that it
// reads as a fresh read of it does.
// The run's own forms always win: a file any of whose first lines is one of
// its records stays in them, unless most of its timestamped lines are not
// (a log4j file that writes its level unpadded has ERROR lines that parse
// as records written before 0.18.6; its INFO lines do not).

// Layout is how a record file's lines are written.
type Layout uint8

const (
	// Own is the run's own layout (spec §2), and the layout of plain files.
	Own Layout = iota
	// Log4j is logback's and log4j's common patterns: a date and time (or
	// logback's default time of day alone), then thread, level and logger
	// fields in some order, the level padded or not.
	Log4j
	// Python is Python logging's asctime patterns (`2015-10-18
	// 18:04:11,034 - name - INFO - message` and the like).
	Python
	// PythonBare is basicConfig's default, `INFO:name:message`: no time.
	PythonBare
	// ISO8601 is timestamped lines in general: a date and time at the start
	// of the line (`T` or space between them, a zone or not, bracketed or
	// not; Go's `yyyy/MM/dd` too), a level where the header has one.
	ISO8601
	// Syslog3164 is BSD syslog: `[<PRI>]Mmm dd HH:mm:ss host tag: message`.
	Syslog3164
	// Syslog5424 is IETF syslog: `<PRI>1 timestamp host app procid msgid sd message`.
	Syslog5424
	// Logcat is Android's logcat threadtime: `MM-dd HH:mm:ss.SSS pid tid L tag: message`.
	Logcat
	// JSONLines is one JSON object a line (slog, zap, zerolog, pino,
	// bunyan, structlog, transcripts): see jsonline.go.
	JSONLines
	layoutCount
)

var layoutNames = [layoutCount]string{
	Own:        "runls",
	Log4j:      "log4j/logback",
	Python:     "Python logging",
	PythonBare: "Python logging (basicConfig default)",
	ISO8601:    "ISO-8601 timestamped lines",
	Syslog3164: "syslog (RFC 3164)",
	Syslog5424: "syslog (RFC 5424)",
	Logcat:     "Android logcat",
	JSONLines:  "JSON lines",
}

// String names the layout, as the foreign-layout diagnostic does.
func (l Layout) String() string {
	if l < layoutCount {
		return layoutNames[l]
	}
	return "unknown"
}

// Foreign reports whether the layout is another than the run's own.
func (l Layout) Foreign() bool { return l != Own && l < layoutCount }

// LayoutOf reads back a layout kept as a number (a cache entry); ok is
// false for a number no layout has.
func LayoutOf(n uint8) (Layout, bool) { return Layout(n), n < uint8(layoutCount) }

// DetectLines is how many non-empty lines of a file's head Detect reads.
const DetectLines = 100

// Detect decides the layout of a file of the given form from its head, its
// first bytes; a last line without a line end is not looked at (it may be
// half written). decided is false when the head holds no complete
// non-empty line yet: the caller asks again when more is written. Plain
// files are Own.
//
// A record file is a foreign log when, of its first DetectLines non-empty
// lines, at least a quarter are lines of one other layout (not most, as
// stack traces take many lines between records), and those of them that are
// not records of the run's own forms outnumber the lines that are.
func Detect(form Form, head []byte) (layout Layout, decided bool) {
	if !form.IsRecord() {
		return Own, true
	}
	var counts, notOwn [layoutCount]int
	own, total := 0, 0
	for start := 0; start < len(head) && total < DetectLines; {
		end := bytes.IndexByte(head[start:], '\n')
		if end < 0 {
			break // a line still being written may not show its layout yet
		}
		end += start
		text := head[start:end]
		start = end + 1
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		total++
		isOwn := ownLine(text, form)
		if isOwn {
			own++
		}
		if l := classify(text); l != Own {
			counts[l]++
			if !isOwn {
				notOwn[l]++
			}
		}
	}
	if total == 0 {
		return Own, false
	}
	// Log4j, Python and ISO-8601 lines are read by one parser; a file's
	// lines of them count together, and it takes the name most of them have.
	best, bestCount, bestNotOwn := Own, 0, 0
	for l := Layout(1); l < layoutCount; l++ {
		c, n := counts[l], notOwn[l]
		if isStamped(l) {
			if l != Log4j {
				continue
			}
			c = counts[Log4j] + counts[Python] + counts[ISO8601]
			n = notOwn[Log4j] + notOwn[Python] + notOwn[ISO8601]
			l = Log4j
			if counts[Python] > counts[l] {
				l = Python
			}
			if counts[ISO8601] > counts[l] {
				l = ISO8601
			}
		}
		if c > bestCount {
			best, bestCount, bestNotOwn = l, c, n
		}
	}
	if best == Own || bestCount*4 < total || bestNotOwn <= own {
		return Own, true
	}
	return best, true
}

// ownLine reports whether text is a record line of the run's own forms,
// of the file's form or the other (the run's lines in a file of the other
// kind), but not a history-form line whose text starts with a level word:
// that is logback's `%d [%thread] %-5level`.
func ownLine(text []byte, form Form) bool {
	if _, ok := parseRecord(text, form == Log); ok {
		return true
	}
	r, ok := parseRecord(text, form != Log)
	if !ok || form != Log {
		return ok
	}
	word := text[r.stateEnd+2:]
	if sp := bytes.IndexByte(word, ' '); sp >= 0 {
		word = word[:sp]
	}
	_, isLevel := levelWord(word)
	return !isLevel
}

func isStamped(l Layout) bool { return l == Log4j || l == Python || l == ISO8601 }

// classify tells which other layout a line's start is written in, Own for
// none.
func classify(text []byte) Layout {
	if t := bytes.TrimLeft(text, " \t"); len(t) >= 2 && t[0] == '{' && (t[1] == '"' || t[1] == '}' || t[1] == ' ') {
		return JSONLines
	}
	if _, ok := ietfStart(text); ok {
		return Syslog5424
	}
	if _, ok := bsdStart(text); ok {
		return Syslog3164
	}
	if _, ok := logcatStart(text); ok {
		return Logcat
	}
	if _, ok := pythonBareStart(text); ok {
		return PythonBare
	}
	h, ok := stampedStart(text)
	switch {
	case !ok:
		return Own
	case h.python:
		return Python
	case h.level != None && (h.shape == shapeSpace || h.shape == shapeClock):
		return Log4j
	}
	return ISO8601
}
