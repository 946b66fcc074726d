package recordformat

import "bytes"

// The record starts of other layouts: each parser reads a line's header (its
// time, its level where the layout has one, the fields before the message)
// and tells where the evidence text starts. What is not evidence: the time,
// the level, and the fields between them that say where the line came from
// but not what happened (a thread in brackets, a process id, a syslog host).
// Logger and program names stay evidence: they are what a reader searches
// for ("MRAppMaster", "sshd").

// foreignHeader is what a record start of another layout holds.
type foreignHeader struct {
	time     int64 // NoTime when the layout writes none (PythonBare)
	level    Level
	evidence int
	shape    stampShape // stamped layouts: the stamp's shape
	python   bool       // stamped layouts: Python logging's separators or level words
}

// start parses a record start of layout l (not JSONLines) at text's start.
func (l Layout) start(text []byte) (foreignHeader, bool) {
	switch l {
	case Log4j, Python, ISO8601:
		return stampedStart(text)
	case PythonBare:
		return pythonBareStart(text)
	case Syslog3164:
		return bsdStart(text)
	case Syslog5424:
		return ietfStart(text)
	case Logcat:
		return logcatStart(text)
	}
	return foreignHeader{}, false
}

// headerSpan bounds how far into a line the header fields are looked for.
const headerSpan = 160

// stampedStart reads `<stamp> <header fields> <message>`: the header holds
// at most a few tokens before the level (a thread in brackets, a process
// id, a logger name followed by ` - `, separators), the level itself bare,
// in brackets or followed by a colon, then perhaps a thread, a process id and
// separators; the message follows. Without a level, the evidence starts
// after the stamp.
func stampedStart(text []byte) (foreignHeader, bool) {
	st, end, shape := leadingStamp(text)
	if shape == shapeNone {
		return foreignHeader{}, false
	}
	h := foreignHeader{time: st.key(), shape: shape}
	limit := min(len(text), end+headerSpan)
	i := skipSeparators(text, end, limit, &h.python)
	h.evidence = i
	for tok := 0; tok < 5 && i < limit; tok++ {
		wEnd, inner := headerToken(text, i, limit)
		if wEnd == i {
			break
		}
		if lv, ok := levelWord(inner); ok {
			h.level = lv
			if string(inner) == "WARNING" || string(inner) == "CRITICAL" {
				h.python = true
			}
			if wEnd < len(text) && text[wEnd] == ':' && (wEnd+1 >= len(text) || text[wEnd+1] != ' ') {
				h.python = true // %(asctime)s:%(levelname)s:%(name)s
			}
			h.evidence = afterLevel(text, wEnd, limit, &h.python)
			return h, true
		}
		bracketed := text[i] == '[' || text[i] == '<'
		next := skipSeparators(text, wEnd, limit, nil)
		switch {
		case bracketed, allDigits(inner):
		case bytes.IndexByte(text[wEnd:next], '-') >= 0:
			// a logger name before ` - `: Python's `- name - LEVEL -`
		default:
			return h, true // the message has begun: no level
		}
		i = next
	}
	return h, true
}

// headerToken reads a token at text[i]: `[…]` or `<…>` (inner: what the
// brackets hold), else a run up to a space or colon.
func headerToken(text []byte, i, limit int) (end int, inner []byte) {
	if c := text[i]; c == '[' || c == '<' {
		closer := byte(']')
		if c == '<' {
			closer = '>'
		}
		j := bytes.IndexByte(text[i+1:limit], closer)
		if j < 0 {
			return i, nil
		}
		inner = bytes.TrimSpace(text[i+1 : i+1+j])
		return i + 2 + j, inner
	}
	j := i
	for j < limit && text[j] != ' ' && text[j] != '\t' && text[j] != ':' {
		j++
	}
	return j, text[i:j]
}

// skipSeparators skips spaces, tabs, `|`, `:` and dash runs standing alone
// (` - `, ` --- `); a single dash marks Python's separators.
func skipSeparators(text []byte, i, limit int, python *bool) int {
	for i < limit {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '|' || c == ':':
			i++
		case c == '-':
			j := i
			for j < limit && text[j] == '-' {
				j++
			}
			if (j < len(text) && text[j] != ' ') || (i > 0 && text[i-1] != ' ') {
				return i
			}
			if j-i == 1 && python != nil {
				*python = true
			}
			i = j
		default:
			return i
		}
	}
	return i
}

// afterLevel skips, after a level token, separators and up to three of a
// thread in brackets, a process id and `---` (Spring Boot's
// `INFO 12345 --- [main] logger : message`).
func afterLevel(text []byte, i, limit int, python *bool) int {
	i = skipSeparators(text, i, limit, python)
	for range 3 {
		if i >= limit {
			break
		}
		end, inner := headerToken(text, i, limit)
		if end == i || !(text[i] == '[' || allDigits(inner)) || (end < len(text) && text[end] != ' ' && text[end] != '\t') {
			break
		}
		i = skipSeparators(text, end, limit, nil)
	}
	return i
}

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// pythonBareStart reads basicConfig's `LEVEL:logger:message`.
func pythonBareStart(text []byte) (foreignHeader, bool) {
	c := bytes.IndexByte(text, ':')
	if c < 4 || c > 8 {
		return foreignHeader{}, false
	}
	switch string(text[:c]) {
	case "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL":
	default:
		return foreignHeader{}, false
	}
	lv, _ := levelWord(text[:c])
	rest := text[c+1:]
	n := bytes.IndexByte(rest[:min(len(rest), 200)], ':')
	if n < 1 || bytes.IndexByte(rest[:n], ' ') >= 0 {
		return foreignHeader{}, false
	}
	return foreignHeader{time: NoTime, level: lv, evidence: c + 1 + n + 1}, true
}

// priAt reads syslog's `<PRI>` at text's start: its value and end; end 0
// when there is none.
func priAt(text []byte) (pri, end int) {
	if len(text) < 3 || text[0] != '<' {
		return 0, 0
	}
	j := bytes.IndexByte(text[1:min(len(text), 5)], '>')
	if j < 1 {
		return 0, 0
	}
	v, ok := digitsAt(text, 1, j)
	if !ok || v > 191 {
		return 0, 0
	}
	return v, j + 2
}

// fieldEnd is where the space-free field at text[i] ends; ok is false when
// it is empty or runs to the end of the line.
func fieldEnd(text []byte, i int) (int, bool) {
	j := i
	for j < len(text) && text[j] != ' ' {
		j++
	}
	return j, j > i && j < len(text)
}

// bsdStart reads RFC 3164's `[<PRI>]Mmm dd HH:mm:ss host tag…`; the
// evidence starts at the tag.
func bsdStart(text []byte) (foreignHeader, bool) {
	pri, i := priAt(text)
	st, end, ok := bsdStampAt(text, i)
	if !ok || end >= len(text) || text[end] != ' ' {
		return foreignHeader{}, false
	}
	st.year = 0
	h := foreignHeader{time: st.key()}
	if i > 0 {
		h.level = syslogLevel(pri)
	}
	hostEnd, ok := fieldEnd(text, end+1)
	if !ok {
		return foreignHeader{}, false
	}
	h.evidence = hostEnd + 1
	return h, true
}

// ietfStart reads RFC 5424's `<PRI>1 TIMESTAMP HOST APP …`; the evidence
// starts at the app name. A NILVALUE (`-`) timestamp gives no time.
func ietfStart(text []byte) (foreignHeader, bool) {
	pri, i := priAt(text)
	if i == 0 || i+2 >= len(text) || text[i] < '1' || text[i] > '9' || text[i+1] != ' ' {
		return foreignHeader{}, false
	}
	i += 2
	h := foreignHeader{time: NoTime, level: syslogLevel(pri)}
	if text[i] == '-' {
		i++
	} else {
		st, end, shape := dateTimeAt(text, i)
		if shape != shapeT {
			return foreignHeader{}, false
		}
		h.time, i = st.key(), end
	}
	if i >= len(text) || text[i] != ' ' {
		return foreignHeader{}, false
	}
	hostEnd, ok := fieldEnd(text, i+1)
	if !ok {
		return foreignHeader{}, false
	}
	h.evidence = hostEnd + 1
	return h, true
}

// logcatStart reads threadtime's `MM-dd HH:mm:ss.SSS  pid  tid L tag: …`;
// the evidence starts at the tag.
func logcatStart(text []byte) (foreignHeader, bool) {
	var st stampFields
	mo, ok1 := digitsAt(text, 0, 2)
	d, ok2 := digitsAt(text, 3, 2)
	if !ok1 || !ok2 || len(text) < 20 || text[2] != '-' || text[5] != ' ' {
		return foreignHeader{}, false
	}
	end, ok := clockAt(text, 6, &st)
	if !ok || st.ms < 0 {
		return foreignHeader{}, false
	}
	st.month, st.day = mo, d
	i := end
	for range 2 { // pid, tid
		j := i
		for j < len(text) && text[j] == ' ' {
			j++
		}
		k := j
		for k < len(text) && isDigit(text[k]) {
			k++
		}
		if j == i || k == j {
			return foreignHeader{}, false
		}
		i = k
	}
	if i+3 > len(text) || text[i] != ' ' || text[i+2] != ' ' {
		return foreignHeader{}, false
	}
	lv, ok := logcatLevel(text[i+1])
	if !ok {
		return foreignHeader{}, false
	}
	return foreignHeader{time: st.key(), level: lv, evidence: i + 3}, true
}
