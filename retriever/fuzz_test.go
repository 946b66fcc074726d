package retriever

import (
	"testing"
	"unicode/utf8"

	"runls/recordformat"
)

// FuzzParseInterpreter: any input either loads or is an error; a loaded
// interpreter reads any text without panic and gives a message range within it.
func FuzzParseInterpreter(f *testing.F) {
	f.Add([]byte(`{"rules":[{"match":"^(?P<agent>\\S+) said: (?P<text>(?s).*)$","reading":"said"}]}`), "Alice said: hi\n  there")
	f.Add([]byte(`{"rules":[{"match":"x","reading":"leftOut"},{"match":"(?P<text>y)?","reading":"told"}]}`), "zzz")
	f.Add([]byte(`{"rules":[]}`), "")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		in, err := ParseInterpreter(data)
		if err != nil {
			return
		}
		r, s, e := in.Read(text)
		if s < 0 || e < s || e > len(text) {
			t.Fatalf("reading %q range [%d,%d) of %d bytes", r, s, e, len(text))
		}
	})
}

// FuzzPieceEnd: pieces cover a text in order, each of at most MaxPieceChars
// UTF-16 units, never splitting a character.
func FuzzPieceEnd(f *testing.F) {
	f.Add([]byte("short"), uint16(0))
	f.Add([]byte("😀é\xff"), uint16(1998))
	f.Fuzz(func(t *testing.T, tail []byte, pad uint16) {
		text := append([]byte(nil), make([]byte, int(pad)%4096)...)
		for i := range text {
			text[i] = 'a'
		}
		text = append(text, tail...)
		for start := 0; start < len(text); {
			end := pieceEnd(text, start)
			if end <= start || end > len(text) {
				t.Fatalf("piece [%d,%d) of %d bytes", start, end, len(text))
			}
			if n := recordformat.UTF16Len(text[start:end]); n > MaxPieceChars {
				t.Fatalf("piece of %d units", n)
			}
			if end < len(text) && !utf8.RuneStart(text[end]) && utf8.Valid(text) {
				t.Fatalf("piece ends inside a character at %d", end)
			}
			start = end
		}
	})
}
