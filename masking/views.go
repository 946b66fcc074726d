package masking

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The credential rules are written for text as a person types it into a file:
// a value's quote is a quote, a line ends at a line end, and a value follows
// its name after a few blanks. Evidence text is often not that. Agents write
// tool calls as JSON, so a secret is inside a JSON string
// (`{"content": "api_key = \"…\"\n"}`); and records and pasted files indent
// their lines (`<key>` then, on the next line and indented, the value). So
// where a text holds JSON escapes or indented lines, the credential rules
// also read a readable view of it, with the escapes undone and the lines'
// indentation taken off, and what they find there is mapped back onto the text.

// maxViews bounds how many times a view is made of a view (JSON in a JSON
// string is escaped twice).
const maxViews = 2

// readable returns the readable view of text: its JSON string escapes undone
// (\" \\ \/ \b \f \n \r \t \uXXXX) and the blanks that start its lines
// (after a line end or an escaped one) removed; the mapping of the view back
// onto text; and false when the view would be text itself.
func readable(text string) (string, Mapping, bool) {
	if !hasEscapeOrIndent(text) {
		return "", Mapping{}, false
	}
	var spans []Span
	lineStart := false // at the start of a line, after its line end
	for i := 0; i < len(text); i++ {
		b := text[i]
		if lineStart && (b == ' ' || b == '\t') {
			j := i
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			spans = append(spans, Span{Start: i, End: j})
			i = j - 1
			lineStart = false
			continue
		}
		lineStart = b == '\n'
		if b != '\\' || i+1 >= len(text) {
			continue
		}
		n, dec := escapeAt(text, i)
		if n == 0 {
			continue
		}
		spans = append(spans, Span{Start: i, End: i + n, Placeholder: dec})
		lineStart = dec == "\n"
		i += n - 1
	}
	if len(spans) == 0 {
		return "", Mapping{}, false
	}
	out, mp := Apply(text, spans)
	return out, mp, true
}

// hasEscapeOrIndent reports whether text holds a backslash or an indented
// line, at the speed of a byte search: most texts hold neither.
func hasEscapeOrIndent(text string) bool {
	if strings.IndexByte(text, '\\') >= 0 {
		return true
	}
	for i := strings.IndexByte(text, '\n'); i >= 0 && i+1 < len(text); {
		if b := text[i+1]; b == ' ' || b == '\t' {
			return true
		}
		k := strings.IndexByte(text[i+1:], '\n')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// escapeAt reads the escape that starts with the backslash at i: its length
// and what it stands for; 0 when it is not a JSON escape.
func escapeAt(text string, i int) (int, string) {
	switch text[i+1] {
	case '"':
		return 2, `"`
	case '\\':
		return 2, `\`
	case '/':
		return 2, "/"
	case 'b':
		return 2, "\b"
	case 'f':
		return 2, "\f"
	case 'n':
		return 2, "\n"
	case 'r':
		return 2, "\r"
	case 't':
		return 2, "\t"
	case 'u':
		r, ok := hex4(text, i+2)
		if !ok {
			return 0, ""
		}
		if utf16.IsSurrogate(r) {
			if r2, ok := hex4(text, i+8); ok && i+7 < len(text) && text[i+6] == '\\' && text[i+7] == 'u' {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					return 12, string(pair)
				}
			}
			return 0, ""
		}
		return 6, string(r)
	}
	return 0, ""
}

func hex4(text string, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	v, err := strconv.ParseUint(text[i:i+4], 16, 16)
	return rune(v), err == nil
}
