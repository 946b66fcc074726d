package retriever

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"runls/masking"
)

// TestStackTraceHints: a record whose unindented continuation lines are all
// stack-trace lines gets a Hint whose message begins with its first
// exception line and gives their number; any other unindented line keeps
// the Warning (spec §9, revision 3).
func TestStackTraceHints(t *testing.T) {
	const head = "2026-10-21 18:00:00.000 ERROR [running] [conv-1] A failed\n"
	tests := []struct {
		name     string
		cont     string
		severity Severity
		prefix   string
	}{
		{"a java trace", "java.lang.IllegalStateException: bad state 7\n\tat a.B.c(B.java:1)\n\t... 2 more\n", SeverityHint,
			"java.lang.IllegalStateException: bad state 7 — 3 stack-trace lines"},
		{"the first exception line, not a Caused by", "\tat a.B.c(B.java:1)\nCaused by: java.io.IOException: pipe\n", SeverityHint,
			"Caused by: java.io.IOException: pipe — 2 stack-trace lines"},
		{"java.lang.Error alone", "java.lang.Error\n", SeverityHint, "java.lang.Error — 1 stack-trace line"},
		{"no exception line", "\tat a.B.c(B.java:1)\n", SeverityHint, "a stack trace: 1 stack-trace line"},
		{"indented lines among them do not count", "java.lang.Error: x\n  the agent's own words\n\tat a.B.c(B.java:1)\n", SeverityHint,
			"java.lang.Error: x — 2 stack-trace lines"},
		{"one line of prose", "java.lang.Error: x\nthen the agent went on\n", SeverityWarning, "2 continuation lines"},
		{"a line that looks like a record", "2026-10-21 18:00:01 [s] [c] B x\n", SeverityWarning, "1 continuation line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeRun(t, map[string]string{"episode-1/a/a.log": head + tt.cont})
			ix := openTest(t, Options{Root: root})
			_, err := ix.Refresh(context.Background(), nil)
			must(t, err)
			ds := ix.Diagnostics(filepath.Join(root, "episode-1/a/a.log"), 0)
			if len(ds) != 1 || ds[0].Severity != tt.severity || ds[0].Code != CodeUnindentedContinuation || !strings.HasPrefix(ds[0].Message, tt.prefix) {
				t.Errorf("got\n%swant severity %d, message starting %q", dump(ds), tt.severity, tt.prefix)
			}
		})
	}
}

// TestHintsAndTheCap: Hints do not count against the cap and are all
// published; the Warnings are capped as before, in line order with them.
func TestHintsAndTheCap(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&sb, "2026-10-21 18:00:%02d.000 ERROR [running] [conv-1] A failed %d\njava.lang.Error: %d\n", 2*i, i, i)
		fmt.Fprintf(&sb, "2026-10-21 18:00:%02d.000 ERROR [running] [conv-1] A failed %d\nno indent %d\n", 2*i+1, i, i)
	}
	root := writeRun(t, map[string]string{"episode-1/a/a.log": sb.String()})
	ix := openTest(t, Options{Root: root})
	_, err := ix.Refresh(context.Background(), nil)
	must(t, err)
	path := filepath.Join(root, "episode-1/a/a.log")
	ds := ix.Diagnostics(path, 3)
	var hints, warnings, more int
	for i, d := range ds {
		switch {
		case d.Code == CodeMore:
			more++
			if !strings.HasPrefix(d.Message, "3 more") || d.Range.Start.Line != 11 {
				t.Errorf("more-warnings %+v: want 3 more, at the third warning (line 11)", d)
			}
		case d.Severity == SeverityHint:
			hints++
		default:
			warnings++
		}
		if i > 0 && d.Range.Start.Line < ds[i-1].Range.Start.Line {
			t.Errorf("not in line order:\n%s", dump(ds))
		}
	}
	if hints != 5 || warnings != 2 || more != 1 {
		t.Errorf("%d hints, %d warnings, %d more-warnings; want 5, 2, 1:\n%s", hints, warnings, more, dump(ds))
	}
}

// TestHintMasked: with masking on, the exception line in a Hint is masked.
func TestHintMasked(t *testing.T) {
	root := writeRun(t, map[string]string{"episode-1/a/a.log": "2026-10-21 18:00:00.000 ERROR [running] [conv-1] A failed\n" +
		"com.example.AuthException: token ghp_0123456789abcdefghijABCDEFGHIJ012345 refused\n\tat a.B.c(B.java:1)\n"})
	ix := openTest(t, Options{Root: root, Masker: masking.HidingOutside(root)})
	_, err := ix.Refresh(context.Background(), nil)
	must(t, err)
	ds := ix.Diagnostics(filepath.Join(root, "episode-1/a/a.log"), 0)
	if len(ds) != 1 || ds[0].Severity != SeverityHint || strings.Contains(ds[0].Message, "ghp_0123") || !strings.Contains(ds[0].Message, "com.example.AuthException") {
		t.Errorf("got\n%s", dump(ds))
	}
}

// TestHintFollows: a trace that grows a line of prose turns into a
// Warning, and a later trace is read as it comes (the memo keeps only the
// spans that can no longer change).
func TestHintFollows(t *testing.T) {
	root := writeRun(t, map[string]string{"episode-1/a/a.log": "2026-10-21 18:00:00.000 ERROR [running] [conv-1] A failed\njava.lang.Error: x\n"})
	path := filepath.Join(root, "episode-1/a/a.log")
	ix := openTest(t, Options{Root: root})
	steps := []struct {
		add  string
		want []Severity
	}{
		{"", []Severity{SeverityHint}},
		{"not a trace line\n", []Severity{SeverityWarning}},
		{"2026-10-21 18:00:01.000 ERROR [running] [conv-1] A again\n\tat a.B.c(B.java:1)\n", []Severity{SeverityWarning, SeverityHint}},
		{"2026-10-21 18:00:02.000 INFO  [running] [conv-1] A fine\n", []Severity{SeverityWarning, SeverityHint}},
	}
	for i, st := range steps {
		if st.add != "" {
			appendFile(t, root, "episode-1/a/a.log", st.add)
		}
		_, err := ix.Refresh(context.Background(), nil)
		must(t, err)
		ds := ix.Diagnostics(path, 0)
		var got []Severity
		for _, d := range ds {
			got = append(got, d.Severity)
		}
		if fmt.Sprint(got) != fmt.Sprint(st.want) {
			t.Errorf("step %d: %v, want %v:\n%s", i, got, st.want, dump(ds))
		}
		fresh := openTest(t, Options{Root: root})
		_, err = fresh.Refresh(context.Background(), nil)
		must(t, err)
		if a, b := dump(ds), dump(fresh.Diagnostics(path, 0)); a != b {
			t.Errorf("step %d: followed\n%sfresh\n%s", i, a, b)
		}
	}
}

// TestHintMemoKeepsNoText: what a file's memo keeps of its stack traces is
// where their exception lines are, not their text, which each Hint reads
// again (issue 33: some 45,000 spans' lines were 5 MB of the heap after a
// 100,000-file reopen); the Hints are the same when worded again from it.
func TestHintMemoKeepsNoText(t *testing.T) {
	const traces = 20000
	var sb strings.Builder
	for i := range traces {
		fmt.Fprintf(&sb, "2026-10-21 18:%02d:%02d.000 ERROR [running] [conv-1] A failed %d\njava.lang.IllegalStateException: %s %d\n\tat a.B.c(B.java:1)\n",
			i/60%60, i%60, i, strings.Repeat("a long reason ", 13), i)
	}
	log := "episode-1/a/a.log"
	root := writeRun(t, map[string]string{log: sb.String()})
	ix := openTest(t, Options{Root: root})
	_, err := ix.Refresh(context.Background(), nil)
	must(t, err)
	path := filepath.Join(root, log)
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC() // the read-back's pooled buffer, no memo's
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	n, last := func() (int, string) { // its answer not kept
		ds := ix.Diagnostics(path, Uncapped)
		return len(ds), ds[len(ds)-1].Message
	}()
	kept := int64(heap()) - int64(before)
	if n != traces || !strings.HasPrefix(last, "java.lang.IllegalStateException: a long reason") {
		t.Fatalf("%d diagnostics, the last %q", n, last)
	}
	if per := kept / traces; per > 64 {
		t.Errorf("the memo keeps %d bytes a stack trace (%d in all), want at most 64: its exception line's text?", per, kept)
	}
	first := ix.Diagnostics(path, Uncapped)
	if again := ix.Diagnostics(path, Uncapped); !reflect.DeepEqual(again, first) {
		t.Errorf("the Hints worded again from the memo differ:\n%s", dump(again))
	}
}
