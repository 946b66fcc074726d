package recordformat

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseKinds(t *testing.T) {
	tests := []struct {
		name     string
		form     Form
		lines    string
		kinds    []Kind
		evidence []string
		conv     []string
		levels   []Level
	}{
		{
			name:     "history with field, milliseconds and continuations",
			form:     History,
			lines:    "2026-10-21 18:00:00 [running] [conv-1] Alice has started.\n  second line\nat com.x(Y.java:1)\n2026-10-21 18:00:01,123 [running] [-] Bob hi\n2026-10-21 18:00:02.456 [idle] Carol old\n",
			kinds:    []Kind{Fielded, Indented, Unindented, Fielded, Unfielded},
			evidence: []string{"Alice has started.", "second line", "at com.x(Y.java:1)", "Bob hi", "Carol old"},
			conv:     []string{"conv-1", "", "", "-", ""},
		},
		{
			name:     "log levels left-justified to five characters",
			form:     Log,
			lines:    "2026-10-21 18:00:00 INFO  [running] [-] Alice chat started\n2026-10-21 18:00:00 DEBUG [running] [c] A d\n2026-10-21 18:00:00 WARN  [s] A w\n2026-10-21 18:00:00 ERROR [s] [c2] A e\n2026-10-21 18:00:00 TRACE [s] [c2] A t\n2026-10-21 18:00:00 INFO [s] [c] A one space is no level\n",
			kinds:    []Kind{Fielded, Fielded, Unfielded, Fielded, Fielded, Unindented},
			evidence: []string{"Alice chat started", "A d", "A w", "A e", "A t", "2026-10-21 18:00:00 INFO [s] [c] A one space is no level"},
			levels:   []Level{Info, Debug, Warn, Error, Trace, None},
		},
		{
			name:     "lines before the first record and an indented one there",
			form:     History,
			lines:    "header\n  indented before\n2026-10-21 18:00:00 [s] [c] A x\n",
			kinds:    []Kind{BeforeFirst, BeforeFirst, Fielded},
			evidence: []string{"header", "  indented before", "A x"},
		},
		{
			name:     "an indented line that looks like a record continues",
			form:     History,
			lines:    "2026-10-21 18:00:00 [s] [c] A x\n  2026-10-21 18:00:00 [s] [other] B y\n",
			kinds:    []Kind{Fielded, Indented},
			evidence: []string{"A x", "2026-10-21 18:00:00 [s] [other] B y"},
		},
		{
			name:     "a history line with a level is not a record of a history file",
			form:     History,
			lines:    "2026-10-21 18:00:00 INFO  [s] [c] A x\n",
			kinds:    []Kind{BeforeFirst},
			evidence: []string{"2026-10-21 18:00:00 INFO  [s] [c] A x"},
		},
		{
			name:     "CRLF, a last line without line end, an empty line",
			form:     History,
			lines:    "2026-10-21 18:00:00 [s] [c] A x\r\n\r\n2026-10-21 18:00:00 [s] [c] A partial",
			kinds:    []Kind{Fielded, Unindented, Fielded},
			evidence: []string{"A x", "", "A partial"},
		},
		{
			name:     "malformed stamps and brackets",
			form:     History,
			lines:    "2026-10-21 18:00:00 [s]x\n2026-10-21 18:00:0 [s] A\n2026-10-21T18:00:00 [s] A\n2026-10-21 18:00:00 [unclosed A\n2026-10-21 18:00:00 [s] [] A empty conversation\n",
			kinds:    []Kind{BeforeFirst, BeforeFirst, BeforeFirst, BeforeFirst, Unfielded},
			evidence: []string{"2026-10-21 18:00:00 [s]x", "2026-10-21 18:00:0 [s] A", "2026-10-21T18:00:00 [s] A", "2026-10-21 18:00:00 [unclosed A", "[] A empty conversation"},
		},
		{
			name:     "plain files are notes",
			form:     Plain,
			lines:    "2026-10-21 18:00:00 [s] [c] A x\n  indented\n",
			kinds:    []Kind{Note, Note},
			evidence: []string{"2026-10-21 18:00:00 [s] [c] A x", "  indented"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.lines)
			lines := Parse(tt.form, data)
			if len(lines) != len(tt.kinds) {
				t.Fatalf("got %d lines, want %d: %+v", len(lines), len(tt.kinds), lines)
			}
			for i, l := range lines {
				if l.Kind != tt.kinds[i] {
					t.Errorf("line %d: kind %v, want %v", i, l.Kind, tt.kinds[i])
				}
				if got := string(data[l.Evidence:l.TextEnd]); got != tt.evidence[i] {
					t.Errorf("line %d: evidence %q, want %q", i, got, tt.evidence[i])
				}
				if tt.conv != nil {
					if got := string(data[l.ConvStart:l.ConvEnd]); got != tt.conv[i] {
						t.Errorf("line %d: conversation %q, want %q", i, got, tt.conv[i])
					}
				}
				if tt.levels != nil && l.Level != tt.levels[i] {
					t.Errorf("line %d: level %v, want %v", i, l.Level, tt.levels[i])
				}
			}
		})
	}
}

func TestFormOf(t *testing.T) {
	for name, want := range map[string]Form{"a.history": History, "x/b.log": Log, "notes.md": Plain, "log": Plain, "a.log.txt": Plain} {
		if got := FormOf(name); got != want {
			t.Errorf("FormOf(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestUTF16(t *testing.T) {
	tests := []struct {
		in    string
		units int
	}{
		{"abc", 3}, {"Café", 4}, {"😀", 2}, {"a😀b", 4}, {"\xff\xfe", 2}, {"", 0}, {"naïve — 😀", 10},
	}
	for _, tt := range tests {
		if got := UTF16Len([]byte(tt.in)); got != tt.units {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.in, got, tt.units)
		}
		if got := ByteOffset([]byte(tt.in), tt.units); got != len(tt.in) {
			t.Errorf("ByteOffset(%q, %d) = %d, want %d", tt.in, tt.units, got, len(tt.in))
		}
	}
	if got := ByteOffset([]byte("a😀b"), 3); got != 5 {
		t.Errorf("ByteOffset after the pair = %d, want 5", got)
	}
	if got := ValidText([]byte("a\xffb")); got != "a\uFFFDb" {
		t.Errorf("ValidText = %q", got)
	}
}

// FuzzParse: any input parses without panic, the lines reported cover the input
// exactly, and every offset lies within its line.
func FuzzParse(f *testing.F) {
	f.Add([]byte("2026-10-21 18:00:00 [running] [conv-1] Alice has started episode 1.\n  more\nstack\n"), uint8(1))
	f.Add([]byte("2026-10-21 18:00:00.123 INFO  [running] [-] Alice chat started\r\nx"), uint8(2))
	f.Add([]byte("\n\n\r\n  \n[]"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, form uint8) {
		lines := Parse(Form(form%3), data)
		var joined bytes.Buffer
		for _, l := range lines {
			if !(l.Start <= l.Evidence && l.Evidence <= l.TextEnd && l.TextEnd <= l.End && l.End <= len(data)) {
				t.Fatalf("offsets out of order: %+v", l)
			}
			if l.End == l.Start {
				t.Fatalf("empty line reported: %+v", l)
			}
			joined.Write(data[l.Start:l.End])
		}
		if !bytes.Equal(joined.Bytes(), data) {
			t.Fatalf("lines do not give back the input")
		}
		_ = UTF16Len(data)
		_ = ValidText(data)
	})
}

// utf16LenPlain counts b's UTF-16 units rune by rune, each invalid byte one
// U+FFFD: the reference for UTF16Len's eight-byte ASCII steps.
func utf16LenPlain(b []byte) int {
	n := 0
	for _, r := range string(b) {
		n += RuneUnits(r)
	}
	return n
}

// TestUTF16LenEqualsPlain: ASCII runs of every length around the eight-byte
// step, with non-ASCII and invalid bytes at every offset.
func TestUTF16LenEqualsPlain(t *testing.T) {
	for _, odd := range []string{"é", "😀", "\xff", "\xf0\x9f", "日"} {
		for pre := range 20 {
			for post := range 12 {
				b := []byte(strings.Repeat("a", pre) + odd + strings.Repeat("z", post))
				if got, want := UTF16Len(b), utf16LenPlain(b); got != want {
					t.Fatalf("UTF16Len(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

func FuzzUTF16Len(f *testing.F) {
	f.Add([]byte("2026-10-21 18:00:00 INFO naïve — 😀 and more ASCII after it"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := UTF16Len(b), utf16LenPlain(b); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", b, got, want)
		}
	})
}
