package retriever

import "strings"

// The pattern of a failure (spec §9 run/failures): its first line's text
// with what varies from one occurrence to the next taken out, so that the
// same failure met with other numbers, ids, names in quotes or files is one
// group. Placeholders: <path> (a word holding / or \, or starting with ~),
// <uuid>, <hex> (0x… or six or more hexadecimal digits holding a digit and a
// letter), <str> (text in double or single quotes, or backquotes) and <n>
// (each run of decimal digits). White space runs fold to one space. What
// masking wrote (<secret>, <path>) reads as a placeholder already. A
// literal "<str>" ends the word before it, as the quote it stands for did
// (`/usr/<str>/x` is "<path><str><path>"), so that a pattern read again is
// itself.

// strPlaceholder stands for a quotation, which is a word of its own (a
// quote ends the word before it): read again it is one still, so that the
// pattern of a pattern is itself (`/"x"` is "/<str>", not "<path>"). The
// other placeholders stand for words or parts of one, and are read so.
const strPlaceholder = "<str>"

// failurePattern returns the pattern of text.
func failurePattern(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') {
				i++
			}
			if b.Len() > 0 && i < len(text) {
				b.WriteByte(' ')
			}
		case c == '"' || c == '\'' || c == '`':
			if end := strings.IndexByte(text[i+1:], c); end >= 0 && (c != '\'' || quoteStarts(text, i)) {
				b.WriteString(strPlaceholder)
				i += end + 2
				continue
			}
			b.WriteByte(c)
			i++
		case strings.HasPrefix(text[i:], strPlaceholder):
			b.WriteString(strPlaceholder)
			i += len(strPlaceholder)
		default:
			j := i
			for j < len(text) && !wordEnd(text[j]) && !strings.HasPrefix(text[j:], strPlaceholder) {
				j++
			}
			if j == i { // a bracket, a comma: kept as it is
				b.WriteByte(c)
				i++
				continue
			}
			writeWord(&b, text[i:j])
			i = j
		}
	}
	return b.String()
}

// quoteStarts tells a single quote that opens a quotation from an
// apostrophe (`don't`): it does not follow a letter or digit.
func quoteStarts(text string, i int) bool {
	return i == 0 || !isAlnum(text[i-1])
}

func wordEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '`', '(', ')', '[', ']', '{', '}', ',', ';':
		return true
	}
	return false
}

// writeWord writes one word (no white space, quote or bracket in it) with
// its varying parts as placeholders; punctuation that ends a sentence or a
// field (`:`, `.`, `'`) is kept after a placeholder.
func writeWord(b *strings.Builder, w string) {
	core := strings.TrimRight(w, ".:'!?")
	tail := w[len(core):]
	switch {
	case core == "":
		b.WriteString(w)
		return
	case strings.ContainsAny(core, `/\`) || strings.HasPrefix(core, "~"):
		if core != "/" && !strings.HasPrefix(core, "<") {
			b.WriteString("<path>")
			b.WriteString(tail)
			return
		}
	case isUUID(core):
		b.WriteString("<uuid>")
		b.WriteString(tail)
		return
	case isHexID(core):
		b.WriteString("<hex>")
		b.WriteString(tail)
		return
	}
	for i := 0; i < len(w); {
		if isDigit(w[i]) {
			for i < len(w) && isDigit(w[i]) {
				i++
			}
			b.WriteString("<n>")
			continue
		}
		b.WriteByte(w[i])
		i++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }
func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80
}

// isUUID reports whether w is 8-4-4-4-12 hexadecimal digits.
func isUUID(w string) bool {
	if len(w) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if w[i] != '-' {
				return false
			}
		} else if !isHex(w[i]) {
			return false
		}
	}
	return true
}

// isHexID reports whether w is 0x and hexadecimal digits, or six or more
// hexadecimal digits with a digit and a letter among them (a hash, an id:
// not a word such as "deface", not a plain number, which <n> takes).
func isHexID(w string) bool {
	if rest, ok := strings.CutPrefix(strings.ToLower(w), "0x"); ok && rest != "" {
		return strings.IndexFunc(rest, func(r rune) bool { return r > 0x7f || !isHex(byte(r)) }) < 0
	}
	if len(w) < 6 {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(w); i++ {
		switch {
		case isDigit(w[i]):
			digit = true
		case isHex(w[i]):
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}
