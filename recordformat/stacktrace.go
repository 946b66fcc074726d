package recordformat

import "bytes"

// Stack traces as logback and the JVM write them after a record (spec §9,
// revision 3): the lines a record's unindented continuation may hold that
// can never be read as a record, and the exception lines that name what was
// thrown.

// IsStackTraceLine reports whether line (without its line end) is a line of
// a stack trace: it starts with a tab, `at `, `Caused by:`, `Suppressed:`,
// `... N more` or `Exception in thread`, or is an exception line.
func IsStackTraceLine(line []byte) bool {
	if len(line) > 0 && line[0] == '\t' {
		return true
	}
	for _, p := range stackPrefixes {
		if bytes.HasPrefix(line, p) {
			return true
		}
	}
	if rest, ok := bytes.CutPrefix(line, []byte("... ")); ok {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		return n > 0 && bytes.Equal(rest[n:], []byte(" more"))
	}
	_, ok := ExceptionName(line)
	return ok
}

var stackPrefixes = [][]byte{[]byte("at "), []byte("Caused by:"), []byte("Suppressed:"), []byte("Exception in thread")}

// ExceptionName returns the qualified name of the exception an exception
// line names, and whether line is one: `qualified.Name(Exception|Error|
// Throwable)[: message]`, the name of at least two parts, each a Java
// identifier (java.lang.Error is one). White space after the line is
// ignored; a line that starts with white space is none.
func ExceptionName(line []byte) ([]byte, bool) {
	line = bytes.TrimRight(line, " \t\r")
	end := bytes.IndexByte(line, ':')
	if end < 0 {
		end = len(line)
	} else if end+1 < len(line) && line[end+1] != ' ' {
		return nil, false // `a.b.FooError:x` is no exception line; `: message` is
	}
	name := line[:end]
	if !(bytes.HasSuffix(name, []byte("Exception")) || bytes.HasSuffix(name, []byte("Error")) || bytes.HasSuffix(name, []byte("Throwable"))) {
		return nil, false
	}
	parts := 0
	for part := range bytes.SplitSeq(name, []byte(".")) {
		if !javaIdentifier(part) {
			return nil, false
		}
		parts++
	}
	if parts < 2 {
		return nil, false
	}
	return name, true
}

// javaIdentifier reports whether b is an identifier as the JVM writes class
// names: a letter, `_` or `$`, then letters, digits, `_` or `$` (non-ASCII
// letters accepted as they come).
func javaIdentifier(b []byte) bool {
	if len(b) == 0 || (b[0] >= '0' && b[0] <= '9') {
		return false
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '$', c >= 0x80:
		default:
			return false
		}
	}
	return true
}

// ThrownName returns the exception a stack-trace line names: an exception
// line's, or the one after `Caused by: `, `Suppressed: ` or `Exception in
// thread "…" `; false for other lines.
func ThrownName(line []byte) ([]byte, bool) {
	t := bytes.TrimLeft(line, " \t")
	for _, p := range [][]byte{[]byte("Caused by: "), []byte("Suppressed: ")} {
		if rest, ok := bytes.CutPrefix(t, p); ok {
			return ExceptionName(rest)
		}
	}
	if rest, ok := bytes.CutPrefix(t, []byte("Exception in thread ")); ok {
		// The thread's name is quoted and may hold spaces.
		if len(rest) > 0 && rest[0] == '"' {
			if q := bytes.IndexByte(rest[1:], '"'); q >= 0 {
				return ExceptionName(bytes.TrimLeft(rest[q+2:], " "))
			}
		}
		return nil, false
	}
	return ExceptionName(t)
}
