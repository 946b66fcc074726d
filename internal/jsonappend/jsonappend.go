// Package jsonappend appends JSON text to a byte slice as encoding/json
// writes it, without reflection: for what is written many times a second
// (run/failures' answer, the fleet's shipped entries), where encoding/json's
// reflection, and the check and copy of a result made by it, were most of
// the cost. It imports nothing of runls.
package jsonappend

import "unicode/utf8"

// plain[c] and plainHTML[c] tell an ASCII byte written as it is, without and
// with the HTML escapes: a look-up a byte, where the comparisons were most
// of a search's answer's encoding (issue 33).
var plain, plainHTML = func() (p, h [utf8.RuneSelf]bool) {
	for c := range utf8.RuneSelf {
		p[c] = c >= 0x20 && c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return p, h
}()

// String appends s as a JSON string, byte for byte as encoding/json writes
// it: invalid UTF-8 as U+FFFD (a byte each), U+2028 and U+2029 escaped,
// and with html '<', '>' and '&' escaped too (json.Marshal's default;
// without it, an Encoder's with SetEscapeHTML(false)).
func String(b []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	written := &plain
	if html {
		written = &plainHTML
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if written[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, `\u00`...)
				b = append(b, hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
