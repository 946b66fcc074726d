package jsonappend

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshal is encoding/json's string, with or without its HTML escapes.
func marshal(s string, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"uote\\back", "tab\tnl\ncr\r\b\f", "\x00\x1f\x7f", "é €", "\xff\xfe", "\u2028\u2029", "a<b>&c"} {
		for _, html := range []bool{true, false} {
			if got, want := String(nil, s, html), marshal(s, html); !bytes.Equal(got, want) {
				t.Errorf("String(%q, html %v) = %s, encoding/json %s", s, html, got, want)
			}
		}
	}
}

// TestStringEveryASCIIByte: each ASCII byte, alone and between letters,
// is written as encoding/json writes it (the escape table, both modes).
func TestStringEveryASCIIByte(t *testing.T) {
	for c := range 128 {
		for _, s := range []string{string(rune(c)), "a" + string(rune(c)) + "b"} {
			for _, html := range []bool{false, true} {
				if got, want := String(nil, s, html), marshal(s, html); !bytes.Equal(got, want) {
					t.Errorf("byte %#x, html %v: %s, want %s", c, html, got, want)
				}
			}
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"a<b>&c", "\u2028\xff\x00", `"\`, "\b\f"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if got, want := String(nil, s, html), marshal(s, html); !bytes.Equal(got, want) {
			t.Fatalf("String(%q, html %v) = %s, encoding/json %s", s, html, got, want)
		}
	})
}
