package recordformat

import (
	"encoding/binary"
	"unicode/utf8"
)

// Text is read as UTF-8 with each invalid byte standing for U+FFFD (spec §1),
// and characters are counted in UTF-16 code units, as LSP and Java count them.

// UTF16Len returns the number of UTF-16 code units of b. ASCII is counted
// eight bytes at a time: each is one unit, and most lines are ASCII.
func UTF16Len(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		if len(b)-i >= 8 && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			n += 8
			i += 8
			continue
		}
		c := b[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		n += RuneUnits(r)
	}
	return n
}

// ByteOffset returns the byte offset in b of UTF-16 offset u; an offset inside
// a surrogate pair or beyond b gives the end of that character or of b.
func ByteOffset(b []byte, u int) int {
	n := 0
	for i := 0; i < len(b); {
		if n >= u {
			return i
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		n += RuneUnits(r)
	}
	return len(b)
}

// ValidText returns b as a string with every invalid byte replaced by U+FFFD.
func ValidText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

// RuneUnits is the UTF-16 length of r: 2 past the Basic Multilingual
// Plane, else 1 (an invalid byte, read as RuneError, is one unit).
func RuneUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
