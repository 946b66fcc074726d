package recordformat

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON lines (spec §2 "JSON lines"): a line that is one JSON object is read
// for what it says, not for its keys and punctuation. Its prose is the
// string values of its message fields at any depth (`message`, `msg`,
// `content`, `text`; strings in an array under such a key count too; at the
// top level also `event`, structlog's message, and `error`/`err`, which zap
// and zerolog give a failure's text in; and `output`, a tool's output in
// a Codex rollout), in the order written, joined with "\n", escapes
// decoded, empty strings left out. A prose string that is itself one JSON
// object (Codex keeps a tool's output so) gives its own prose in its place. Its time is its top-level
// time field (`time`, `timestamp`, `ts`, `@timestamp`, `datetime`,
// `asctime`: a date-time text or an epoch number), its level its top-level
// level field (`level`, `lvl`, `severity`, `levelname`, `loglevel`: a word
// or pino's and bunyan's numbers), and a transcript's role its first `role`
// field at any depth that says `user` or `assistant` (Codex rollouts, the
// messages API), else a `type` that says so (Claude Code sessions:
// `user`/`assistant` at the top level; Codex: `user_message`/`agent_message`
// at any depth).
//
// The scanner is written for this: one pass, no value built but the prose,
// and it checks the object's syntax as it goes (escapes included), so that a
// line that is not one JSON object stays text. It does not check that the
// text is valid UTF-8 (invalid bytes read as U+FFFD, as everywhere, §1) or
// that strings hold no control characters.

// Role is who a transcript line is from.
type Role uint8

const (
	RoleNone Role = iota
	RoleUser
	RoleAssistant
)

// JSONFacts is what a JSON line says of itself besides its prose.
type JSONFacts struct {
	Time  int64 // time key (time.go), NoTime when it has no time field
	Level Level
	Role  Role
}

// maxJSONDepth bounds the nesting the scanner follows; a deeper line is
// read as text.
const maxJSONDepth = 200

// IsJSONObject reports cheaply whether text may be one JSON object: it is,
// surrounding white space aside, `{…}`.
func IsJSONObject(text []byte) bool {
	t := bytes.TrimSpace(text)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}'
}

// JSONLine reads text as one JSON object; ok is false when it is not one.
func JSONLine(text []byte) (JSONFacts, bool) {
	if !IsJSONObject(text) {
		return JSONFacts{Time: NoTime}, false
	}
	s := jsonScanner{b: text}
	ok := s.line()
	return s.facts(), ok
}

// Prose appends the prose of the JSON line text to dst; it appends nothing
// when text is not one JSON object.
func Prose(dst, text []byte) []byte {
	if !IsJSONObject(text) {
		return dst
	}
	s := jsonScanner{b: text, wantProse: true, prose: dst}
	if !s.line() {
		return dst
	}
	return s.prose
}

type jsonScanner struct {
	b []byte
	i int

	time           int64
	hasTime        bool
	level          Level
	role, typeRole Role
	wantProse      bool
	prose          []byte
	proseN         int
	embed          int // how deep in JSON held in a string the scan is
}

func (s *jsonScanner) facts() JSONFacts {
	f := JSONFacts{Time: NoTime, Level: s.level, Role: s.role}
	if s.hasTime {
		f.Time = s.time
	}
	if f.Role == RoleNone {
		f.Role = s.typeRole
	}
	return f
}

func (s *jsonScanner) line() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' || !s.object(1) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// object reads an object at s.b[s.i] == '{' whose members are at depth.
func (s *jsonScanner) object(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		ks, ke, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !s.value(depth, s.b[ks:ke], false) {
			return false
		}
		if more, ok := s.after('}'); !more {
			return ok
		}
	}
}

// after reads what follows a member or an element: a comma (more follow)
// or closer.
func (s *jsonScanner) after(closer byte) (more, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.ws()
		return true, true
	case closer:
		s.i++
		return false, true
	}
	return false, false
}

// array reads an array at s.b[s.i] == '['; its strings are prose when the
// array is a prose field's value.
func (s *jsonScanner) array(depth int, prose bool) bool {
	if depth > maxJSONDepth {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth, nil, prose) {
			return false
		}
		if more, ok := s.after(']'); !more {
			return ok
		}
	}
}

// value reads the value of key (nil in an array) in an object at depth.
func (s *jsonScanner) value(depth int, key []byte, inProse bool) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		start := s.i
		vs, ve, ok := s.str()
		if !ok {
			return false
		}
		raw := s.b[vs:ve]
		if s.wantProse && (inProse || isProseKey(key, depth)) && ve > vs {
			s.appendProse(s.b[start:s.i], depth)
		}
		if key != nil {
			s.stringFact(depth, key, raw)
		}
		return true
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth+1, key != nil && isProseKey(key, depth))
	case c == '-' || isDigit(c):
		start := s.i
		if !s.number() {
			return false
		}
		if depth == 1 && key != nil {
			s.numberFact(key, s.b[start:s.i])
		}
		return true
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

// number reads `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
func (s *jsonScanner) number() bool {
	b := s.b
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && isDigit(b[s.i]):
		s.digits()
	default:
		return false
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

func (s *jsonScanner) digits() bool {
	from := s.i
	for s.i < len(s.b) && isDigit(s.b[s.i]) {
		s.i++
	}
	return s.i > from
}

func (s *jsonScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// str reads a string at s.b[s.i] == '"' and returns its raw contents
// [vs, ve), escapes checked.
func (s *jsonScanner) str() (vs, ve int, ok bool) {
	vs = s.i + 1
	i := vs
	for {
		j := bytes.IndexByte(s.b[i:], '"')
		if j < 0 {
			return 0, 0, false
		}
		end := i + j
		bs := bytes.IndexByte(s.b[i:end], '\\')
		if bs < 0 {
			s.i = end + 1
			return vs, end, true
		}
		// An escape before the quote: walk the escapes from there on.
		k := i + bs
		for k < len(s.b) {
			c := s.b[k]
			if c == '"' {
				s.i = k + 1
				return vs, k, true
			}
			if c != '\\' {
				k++
				continue
			}
			if k+1 >= len(s.b) {
				return 0, 0, false
			}
			switch s.b[k+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				k += 2
			case 'u':
				if k+6 > len(s.b) || !isHex4(s.b[k+2:k+6]) {
					return 0, 0, false
				}
				k += 6
			default:
				return 0, 0, false
			}
		}
		return 0, 0, false
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
}

func hexVal(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case isDigit(c):
			r |= rune(c - '0')
		default:
			r |= rune(c|0x20-'a') + 10
		}
	}
	return r
}

// appendUnquoted appends the decoded text of a checked JSON string (q, with
// its quotes) to dst. An unpaired surrogate decodes to U+FFFD.
func appendUnquoted(dst, q []byte) []byte {
	q = q[1 : len(q)-1]
	for len(q) > 0 {
		k := bytes.IndexByte(q, '\\')
		if k < 0 {
			return append(dst, q...)
		}
		dst = append(dst, q[:k]...)
		q = q[k:]
		switch q[1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hexVal(q[2:6])
			q = q[6:]
			if utf16.IsSurrogate(r) {
				if len(q) >= 6 && q[0] == '\\' && q[1] == 'u' {
					if r2 := utf16.DecodeRune(r, hexVal(q[2:6])); r2 != utf8.RuneError {
						dst = utf8.AppendRune(dst, r2)
						q = q[6:]
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, q[1])
		}
		q = q[2:]
	}
	return dst
}

// maxEmbedDepth bounds how deep JSON text held in a prose string is read
// for its own prose.
const maxEmbedDepth = 2

// appendProse appends a prose string (q, with its quotes). A string that
// is itself one JSON object (a tool's output as Codex keeps it) gives its
// own prose, so that no escaped JSON is searched.
func (s *jsonScanner) appendProse(q []byte, depth int) {
	mark := len(s.prose)
	if s.proseN > 0 {
		s.prose = append(s.prose, '\n')
	}
	from := len(s.prose)
	s.prose = appendUnquoted(s.prose, q)
	if s.embed < maxEmbedDepth && IsJSONObject(s.prose[from:]) {
		inner := jsonScanner{b: bytes.Clone(s.prose[from:]), wantProse: true, embed: s.embed + 1}
		if inner.line() {
			if inner.proseN == 0 {
				s.prose = s.prose[:mark]
				return
			}
			s.prose = append(s.prose[:from], inner.prose...)
		}
	}
	s.proseN++
}

// isProseKey reports whether a string under key at depth is prose.
func isProseKey(key []byte, depth int) bool {
	switch string(key) {
	case "message", "msg", "content", "text", "output":
		return true
	case "event", "error", "err":
		return depth == 1
	}
	return false
}

// stringFact reads the time, level and role a string field may give.
func (s *jsonScanner) stringFact(depth int, key, raw []byte) {
	switch string(key) {
	case "role":
		if s.role == RoleNone {
			s.role = roleWord(raw)
		}
		return
	case "type":
		if s.typeRole == RoleNone {
			switch string(raw) {
			case "user_message":
				s.typeRole = RoleUser
			case "agent_message":
				s.typeRole = RoleAssistant
			case "user", "assistant":
				if depth == 1 {
					s.typeRole = roleWord(raw)
				}
			}
		}
		return
	}
	if depth != 1 {
		return
	}
	switch {
	case isTimeKey(key):
		if s.hasTime {
			return
		}
		if st, _, shape := dateTimeAt(raw, 0); shape != shapeNone {
			s.time, s.hasTime = st.key(), true
		} else if st, ok := epochStamp(raw); ok {
			s.time, s.hasTime = st.key(), true
		}
	case isLevelKey(key):
		if s.level == None {
			s.level, _ = levelWord(raw)
		}
	}
}

// numberFact reads the time and level a top-level number field may give.
func (s *jsonScanner) numberFact(key, num []byte) {
	switch {
	case isTimeKey(key):
		if !s.hasTime {
			if st, ok := epochStamp(num); ok {
				s.time, s.hasTime = st.key(), true
			}
		}
	case isLevelKey(key):
		if s.level == None {
			n, ok := digitsAt(num, 0, len(num))
			if ok && len(num) <= 3 {
				s.level = numericLevel(n)
			}
		}
	}
}

func roleWord(raw []byte) Role {
	switch string(raw) {
	case "user":
		return RoleUser
	case "assistant":
		return RoleAssistant
	}
	return RoleNone
}

func isTimeKey(key []byte) bool {
	switch string(key) {
	case "time", "timestamp", "ts", "@timestamp", "datetime", "asctime":
		return true
	}
	return false
}

func isLevelKey(key []byte) bool {
	switch string(key) {
	case "level", "lvl", "severity", "levelname", "loglevel":
		return true
	}
	return false
}
