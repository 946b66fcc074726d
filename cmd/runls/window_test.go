package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestPieceWindow(t *testing.T) {
	long := strings.Repeat("a", 100) + " needle " + strings.Repeat("z", 100)
	at := strings.Index(long, "needle")
	tests := []struct {
		name    string
		text    string
		matches [][2]int
		width   int
		want    string
	}{
		{"fits", "short needle", [][2]int{{6, 12}}, 20, "short needle"},
		{"exactly the width", "0123456789", nil, 10, "0123456789"},
		{"middle", long, [][2]int{{at, at + 6}}, 20, "…aaa needle zzzzzzz…"},
		{"match at the start", long, [][2]int{{0, 3}}, 10, "aaaaaaaaa…"},
		{"match at the end", long, [][2]int{{len(long) - 3, len(long)}}, 10, "…zzzzzzzzz"},
		{"no match: the start", long, nil, 10, "aaaaaaaaa…"},
		{"a match wider than the window", long, [][2]int{{0, len(long)}}, 10, "aaaaaaaaa…"},
		{"UTF-16 ranges past astral characters", strings.Repeat("😀", 50) + "needle" + strings.Repeat("é", 50), [][2]int{{100, 106}}, 12, "…😀needleééé…"},
	}
	for _, tt := range tests {
		got := pieceWindow(tt.text, tt.matches, tt.width)
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if n := utf8.RuneCountInString(got); n > tt.width {
			t.Errorf("%s: %d characters, wider than %d", tt.name, n, tt.width)
		}
	}
}

// FuzzPieceWindow: a window is never wider than asked, holds the first
// match when it fits, and is the text itself when that fits.
func FuzzPieceWindow(f *testing.F) {
	f.Add("some text with a needle in it", 17, 23, 10)
	f.Fuzz(func(t *testing.T, text string, ms, me, width int) {
		if !utf8.ValidString(text) || width < 3 || width > 1000 || ms < 0 || me < ms || me > len(text) {
			return
		}
		got := pieceWindow(text, [][2]int{{ms, me}}, width)
		n := utf8.RuneCountInString(text)
		if n <= width && got != text {
			t.Fatalf("text that fits was cut: %q", got)
		}
		if utf8.RuneCountInString(got) > width {
			t.Fatalf("%q wider than %d", got, width)
		}
		core := strings.TrimSuffix(strings.TrimPrefix(got, "…"), "…")
		if !strings.Contains(text, core) {
			t.Fatalf("%q is not a part of the text", core)
		}
	})
}

func TestPlainWarnings(t *testing.T) {
	var buf bytes.Buffer
	log := cliLogger(&buf).With(zap.String("run", "/r"))
	log.Info("not shown")
	log.Warn("lines without the conversation field", zap.String("file", "episode-1/a/a.log"), zap.Int("lines", 3))
	log.Error("cache entry dropped", zap.Error(errTest{}))
	want := "runls: warning: lines without the conversation field (run: /r, file: episode-1/a/a.log, lines: 3)\n" +
		"runls: error: cache entry dropped (run: /r, error: torn)\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if !cliLogger(&buf).Core().Enabled(zapcore.WarnLevel) {
		t.Error("WARN is not enabled")
	}
}

type errTest struct{}

func (errTest) Error() string { return "torn" }

// TestSearchWindowsLongPieces: through `runls search`, a 1,500-character
// piece is printed as 200 columns around its match when stdout is not a
// terminal; --full and --json keep it whole; the column is the piece's.
func TestSearchWindowsLongPieces(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("lorem ipsum ", 60) + "the kumquat harvest failed " + strings.Repeat("dolor sit ", 70)
	write(t, dir+"/run/episode-1/a/notes.txt", "short kumquat note\n"+line+"\n")
	code, out, _ := runCLI(t, dir, "search", "--no-cache", "run", "kumquat")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var long string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(l, "run/episode-1/a/notes.txt:2:1: ") {
			long = strings.TrimPrefix(l, "run/episode-1/a/notes.txt:2:1: ")
		}
	}
	if n := utf8.RuneCountInString(long); n != pipeColumns || !strings.HasPrefix(long, "…") || !strings.HasSuffix(long, "…") || !strings.Contains(long, "the kumquat harvest failed") {
		t.Errorf("window of %d characters: %q", n, long)
	}
	if !strings.Contains(out, "notes.txt:1:1: short kumquat note\n") {
		t.Errorf("a short piece is printed whole:\n%s", out)
	}
	_, full, _ := runCLI(t, dir, "search", "--no-cache", "run", "kumquat", "--full")
	if !strings.Contains(full, "notes.txt:2:1: "+line+"\n") {
		t.Errorf("--full cut the piece:\n%s", full)
	}
	_, js, _ := runCLI(t, dir, "search", "--no-cache", "--json", "run", "kumquat")
	if !strings.Contains(js, strings.Repeat("dolor sit ", 70)[:600]) {
		t.Errorf("--json cut the piece")
	}
}
