package recordformat

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the golden files of testdata/layouts")

// TestLayoutsGolden reads every sample of testdata/layouts (written for
// this project, one per layout) as the engine does: its layout decided from
// its head, then every line parsed in it. The golden file gives the layout
// and, a line each, the line's kind, time, level, role and evidence text
// (a JSON line's prose).
func TestLayoutsGolden(t *testing.T) {
	samples, err := filepath.Glob("testdata/layouts/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range samples {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := describe(filepath.Base(path), data)
			golden := path + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", path, golden, got)
			}
		})
	}
	if n < 16 {
		t.Fatalf("only %d samples in testdata/layouts", n)
	}
}

func describe(name string, data []byte) string {
	form := FormOf(name)
	layout, decided := Detect(form, data)
	var b strings.Builder
	fmt.Fprintf(&b, "layout: %s (decided %v)\n", layout, decided)
	for i, l := range ParseIn(form, layout, data) {
		ev := string(data[l.Evidence:l.TextEnd])
		if l.JSON {
			ev = string(Prose(nil, data[l.Start:l.TextEnd]))
		}
		key := l.Time
		if l.Kind == Fielded || l.Kind == Unfielded {
			key = TimeKey(data[l.Start:l.TextEnd])
		}
		tm := KeyText(key)
		if tm == "" {
			tm = "-"
		}
		lv := l.Level.String()
		if lv == "" {
			lv = "-"
		}
		role := [...]string{"-", "user", "assistant"}[l.Role]
		json := ""
		if l.JSON {
			json = " json"
		}
		fmt.Fprintf(&b, "%d %s%s %s %s %s %q\n", i+1, l.Kind, json, tm, lv, role, ev)
	}
	return b.String()
}

func TestDetect(t *testing.T) {
	own := "2026-10-21 18:00:00 INFO  [running] [conv-1] Alice x\n"
	unpaddedInfo := "2015-10-18 18:04:11,034 INFO [main] org.x.Y: started\n"
	unpaddedError := "2015-10-18 18:04:12,000 ERROR [main] org.x.Y: failed\n"
	tests := []struct {
		name    string
		form    Form
		head    string
		want    Layout
		decided bool
	}{
		{"plain files are own", Plain, "2015-10-18 18:04:11,034 INFO [main] x\n", Own, true},
		{"empty head: undecided", Log, "\n\n  \n", Own, false},
		{"the run's own log", Log, strings.Repeat(own, 5), Own, true},
		{"own wins over a few foreign lines", Log, strings.Repeat(own, 5) + strings.Repeat(unpaddedInfo, 4), Own, true},
		{"unpadded log4j with an ERROR line first", Log, unpaddedError + strings.Repeat(unpaddedInfo, 5), Log4j, true},
		{"unpadded log4j, more ERROR than INFO lines stays own", Log, strings.Repeat(unpaddedError, 3) + unpaddedInfo, Own, true},
		{"stack traces between records still foreign", Log, unpaddedInfo + strings.Repeat("\tat x.Y(Y.java:1)\n", 3), Log4j, true},
		{"too few stamped lines: own", Log, unpaddedInfo + strings.Repeat("some build output\n", 4), Own, true},
		{"a history file with a foreign layout", History, strings.Repeat("2026-03-02 10:02:11,506 - app - INFO - x\n", 2), Python, true},
		{"JSON lines in a .log file", Log, `{"level":"info","msg":"a"}` + "\n" + `{"level":"info","msg":"b"}`, JSONLines, true},
		{"a line cut by the head is not looked at", Log, `{"type":"user","message":{"content":"abc`, Own, false},
		{"nor a half-written own line", Log, own + "2026-10-21 18:00:01 INF", Own, true},
		{"a half-written first line: undecided", Log, "2026-10-21 18:00:01 INF", Own, false},
		{"the run's lines in a file of the other form stay the run's", History, strings.Repeat(own, 3), Own, true},
		{"history-form lines without a field in a .log file: logback's thread", Log, strings.Repeat("2026-03-02 09:20:00.001 [main] INFO  c.e.F - x\n", 3), Log4j, true},
		{"history-form lines in a .log file stay the run's", Log, strings.Repeat("2026-10-21 18:00:00 [running] A x\n", 3), Own, true},
		{"only what the first 100 lines say", Log, strings.Repeat("no stamp here\n", 100) + strings.Repeat(unpaddedInfo, 100), Own, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, decided := Detect(tt.form, []byte(tt.head))
			if got != tt.want || decided != tt.decided {
				t.Errorf("Detect = %v, %v; want %v, %v", got, decided, tt.want, tt.decided)
			}
		})
	}
}

// TestLayoutKeptMidway: a file keeps the layout it started in; lines of
// another layout later on continue its records.
func TestLayoutKeptMidway(t *testing.T) {
	data := []byte("2015-10-18 18:04:11,034 INFO [main] a: x\n2015-10-18 18:04:11,035 INFO [main] a: w\n2026-10-21 18:00:00 INFO  [running] [c] Alice y\n")
	layout, _ := Detect(Log, data)
	if layout != Log4j {
		t.Fatalf("layout %v", layout)
	}
	lines := ParseIn(Log, layout, data)
	if lines[2].Kind != Foreign || lines[2].ConvEnd != 0 {
		t.Errorf("an own line in a log4j file: %+v, want a foreign record start without conversation", lines[2])
	}
}

func TestKeyText(t *testing.T) {
	for line, want := range map[string]string{
		"2026-10-21 18:00:00":     "2026-10-21 18:00:00",
		"2026-10-21 18:00:00,007": "2026-10-21 18:00:00.007",
		"x":                       "",
	} {
		if got := KeyText(TimeKey([]byte(line))); got != want {
			t.Errorf("KeyText(TimeKey(%q)) = %q, want %q", line, got, want)
		}
	}
}

func TestEpochStamp(t *testing.T) {
	for num, want := range map[string]string{
		"0":                   "1970-01-01 00:00:00",
		"1772445600.5124":     "2026-03-02 10:00:00.512",
		"1772445600.5":        "2026-03-02 10:00:00.500",
		"1772445600123":       "2026-03-02 10:00:00.123",
		"1772445600123456":    "2026-03-02 10:00:00.123",
		"1772445600123456789": "2026-03-02 10:00:00.123",
	} {
		s, ok := epochStamp([]byte(num))
		if !ok || KeyText(s.key()) != want {
			t.Errorf("epochStamp(%s) = %q, %v; want %q", num, KeyText(s.key()), ok, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.x", "12345678901234567890"} {
		if _, ok := epochStamp([]byte(bad)); ok {
			t.Errorf("epochStamp(%q) is a time", bad)
		}
	}
}

// FuzzForeignParse: a file parsed in any layout gives lines that cover it
// exactly, with offsets within their lines, record starts first.
func FuzzForeignParse(f *testing.F) {
	samples, _ := filepath.Glob("testdata/layouts/*")
	for _, p := range samples {
		if data, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".golden") {
			f.Add(data, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		form := Form(pick%3) | 1
		if form > Log {
			form = Log
		}
		layout, _ := Detect(form, data)
		if pick >= 128 {
			layout = Layout(pick % uint8(layoutCount))
		}
		var joined bytes.Buffer
		for _, l := range ParseIn(form, layout, data) {
			if !(l.Start <= l.Evidence && l.Evidence <= l.TextEnd && l.TextEnd <= l.End && l.End <= len(data)) {
				t.Fatalf("offsets out of order: %+v", l)
			}
			if layout.Foreign() && l.Kind != Foreign && l.Kind != Continued {
				t.Fatalf("kind %v in a foreign log", l.Kind)
			}
			if l.Time != NoTime && KeyText(l.Time) == "" {
				t.Fatalf("time %d has no text", l.Time)
			}
			joined.Write(data[l.Start:l.End])
		}
		if !bytes.Equal(joined.Bytes(), data) {
			t.Fatal("lines do not give back the input")
		}
	})
}
