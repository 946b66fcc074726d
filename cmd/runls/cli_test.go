package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"runls/retriever"
)

// runCLI runs a subcommand in-process from the folder dir.
func runCLI(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func testdata(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestSearchOutputAndExitCodes(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "search", "--episode", "episode-2", "--conversation", "conv-1", "sample-run", "deploy", "database", "migration")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("want 5 lines (default topK), got %d:\n%s", len(lines), out)
	}
	form := regexp.MustCompile(`^sample-run/episode-\d+/[a-z]+/[^:]+:\d+:\d+: .+$`)
	for _, l := range lines {
		if !form.MatchString(l) {
			t.Errorf("line %q is not path:line:column: text", l)
		}
	}
	if !strings.HasPrefix(lines[0], "sample-run/episode-2/alice/alice.history:2:40: Alice was told: Deploy the billing service") {
		t.Errorf("first line %q", lines[0])
	}

	if code, out, _ := runCLI(t, td, "search", "sample-run", "quokka"); code != 1 || out != "" {
		t.Errorf("nothing found: exit %d, output %q", code, out)
	}
}

// The column is 1-based and counted in bytes; the JSON range in UTF-16.
func TestSearchColumnsBytesAndUTF16(t *testing.T) {
	td := testdata(t)
	_, out, _ := runCLI(t, td, "search", "--episode", "episode-2", "--conversation", "conv-1", "--top-k", "1", "sample-run", "encoding", "naïve")
	// "2026-10-21 18:01:30 [running] [conv-1] " then the evidence.
	if !strings.Contains(out, "alice.history:") {
		t.Fatalf("output %q", out)
	}
	_, js, _ := runCLI(t, td, "search", "--json", "--episode", "episode-2", "--conversation", "conv-1", "--top-k", "1", "sample-run", "encoding", "naïve")
	var res retriever.Result
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("JSON %q: %v", js, err)
	}
	if len(res.Items) != 1 {
		t.Fatalf("items %+v", res.Items)
	}
	it := res.Items[0]
	path := retriever.PathOfURI(it.Location.URI)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Split(string(data), "\n")[it.Location.Range.Start.Line]
	col := strings.Index(line, it.Text)
	if col < 0 {
		t.Fatalf("text %q not in line %q", it.Text, line)
	}
	if want := utf16Len(line[:col]); it.Location.Range.Start.Character != want {
		t.Errorf("UTF-16 start %d, want %d", it.Location.Range.Start.Character, want)
	}
	if !strings.Contains(out, ":"+strconv.Itoa(col+1)+": ") {
		t.Errorf("byte column %d not in %q", col+1, out)
	}
	for _, key := range []string{`"items"`, `"location"`, `"uri":"file:///`, `"range"`, `"score"`, `"text"`, `"agent":"alice"`, `"episode":"episode-2"`, `"conversation":"conv-1"`, `"reading":"note"`} {
		if !strings.Contains(js, key) {
			t.Errorf("JSON lacks %s: %s", key, js)
		}
	}
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

func TestBadInput(t *testing.T) {
	td := testdata(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"search", "--episode", "ep-2", "sample-run", "x"}, `episode "ep-2"`},
		{[]string{"search", "--scope", "all", "sample-run", "x"}, `scope "all"`},
		{[]string{"search", "--top-k", "0", "sample-run", "x"}, `topK "0"`},
		{[]string{"search", "--top-k", "1001", "sample-run", "x"}, `topK "1001"`},
		{[]string{"search", "--top-k", "five", "sample-run", "x"}, `topK "five"`},
		{[]string{"search", "--agent", "../x", "sample-run", "x"}, `agent "../x"`},
		{[]string{"search", "--bogus", "sample-run", "x"}, "bogus"},
		{[]string{"search", "sample-run"}, "needs a run folder and a query"},
		{[]string{"search", "missing-run", "x"}, "missing-run"},
		{[]string{"search", "--interpreter", "nope.json", "sample-run", "x"}, "nope.json"},
		{[]string{"check"}, "one run folder"},
		{[]string{"frobnicate"}, `unknown subcommand "frobnicate"`},
		{append([]string{"search", "sample-run"}, manyWords(retriever.MaxQueryTerms+1)...), "invalid query"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, td, tt.args...)
		first := strings.SplitN(errs, "\n", 2)[0]
		if code != 2 || out != "" || !strings.Contains(first, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, first stderr line %q; want 2 and %q", tt.args, code, out, first, tt.want)
		}
	}
}

// manyWords returns n distinct words.
func manyWords(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "w" + strconv.Itoa(i)
	}
	return out
}

func TestCheck(t *testing.T) {
	td := testdata(t)
	code, out, _ := runCLI(t, td, "check", "sample-run")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (infos and hints only)", code)
	}
	form := regexp.MustCompile(`^sample-run/episode-\d+/[a-z]+/[a-z]+\.(log|history):\d+:1: (warning|info|hint): .+ \[(unfielded-line|unindented-continuation)\]$`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		if !form.MatchString(l) {
			t.Errorf("line %q", l)
		}
	}
	// Grouped (spec §9): one Hint per stack trace (revision 3: it names the
	// exception), one Information per file written before 0.18.6 (all five
	// of episode-1), in location order.
	want := []string{
		"sample-run/episode-1/alice/alice.history:1:1: info: this file predates the conversation field",
		"sample-run/episode-1/alice/alice.log:1:1: info: ",
		"sample-run/episode-1/bob/bob.history:1:1: info: ",
		"sample-run/episode-1/bob/bob.log:1:1: info: ",
		"sample-run/episode-1/carol/carol.history:1:1: info: ",
		"sample-run/episode-2/bob/bob.log:4:1: hint: java.lang.IllegalStateException: column \"currency\" of relation \"invoices\" already exists — 4 stack-trace lines",
		"sample-run/episode-3/bob/bob.log:3:1: hint: java.io.UncheckedIOException: java.net.SocketTimeoutException: Read timed out — 4 stack-trace lines",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], w)
		}
	}
	clean := t.TempDir()
	os.MkdirAll(filepath.Join(clean, "episode-1", "a"), 0o755)
	os.WriteFile(filepath.Join(clean, "episode-1", "a", "a.history"), []byte("2026-10-21 18:00:00 [s] [c] A fine\n  indented\n"), 0o644)
	if code, out, _ := runCLI(t, td, "check", clean); code != 0 || out != "" {
		t.Errorf("clean run: exit %d, output %q", code, out)
	}
	// A warning exits 1; Hints beside it change nothing.
	os.WriteFile(filepath.Join(clean, "episode-1", "a", "a.log"), []byte("2026-10-21 18:00:00 ERROR [s] [c] A failed\njava.lang.Error: x\n"+
		"2026-10-21 18:00:01 INFO  [s] [c] A then\nwritten without the indent\n"), 0o644)
	code, out, _ = runCLI(t, td, "check", clean)
	if code != 1 || !strings.Contains(out, "a.log:2:1: hint: java.lang.Error: x") || !strings.Contains(out, "a.log:4:1: warning: 1 continuation line") {
		t.Errorf("a hint and a warning: exit %d, output\n%s", code, out)
	}
}

// TestCheckCodesAndSummary: --code keeps the codes given, --summary counts
// per file and in all, an Information alone exits 0 (spec §10).
func TestCheckCodesAndSummary(t *testing.T) {
	td := testdata(t)
	tests := []struct {
		args []string
		code int
		out  string
	}{
		// Hints are counted under their code, and exit 0 (spec §10).
		{[]string{"--summary"}, 0, "" +
			"sample-run/episode-1/alice/alice.history: 1 unfielded-line\n" +
			"sample-run/episode-1/alice/alice.log: 1 unfielded-line\n" +
			"sample-run/episode-1/bob/bob.history: 1 unfielded-line\n" +
			"sample-run/episode-1/bob/bob.log: 1 unfielded-line\n" +
			"sample-run/episode-1/carol/carol.history: 1 unfielded-line\n" +
			"sample-run/episode-2/bob/bob.log: 1 unindented-continuation\n" +
			"sample-run/episode-3/bob/bob.log: 1 unindented-continuation\n" +
			"7 files: 2 unindented-continuation, 5 unfielded-line\n"},
		{[]string{"--code", "unindented-continuation", "--summary"}, 0, "" +
			"sample-run/episode-2/bob/bob.log: 1 unindented-continuation\n" +
			"sample-run/episode-3/bob/bob.log: 1 unindented-continuation\n" +
			"2 files: 2 unindented-continuation\n"},
		// Only Informations: nothing to fix, exit 0.
		{[]string{"--code", "unfielded-line", "--summary"}, 0, "" +
			"sample-run/episode-1/alice/alice.history: 1 unfielded-line\n" +
			"sample-run/episode-1/alice/alice.log: 1 unfielded-line\n" +
			"sample-run/episode-1/bob/bob.history: 1 unfielded-line\n" +
			"sample-run/episode-1/bob/bob.log: 1 unfielded-line\n" +
			"sample-run/episode-1/carol/carol.history: 1 unfielded-line\n" +
			"5 files: 5 unfielded-line\n"},
		{[]string{"--code", "unfielded-line", "--code", "unindented-continuation"}, 0, ""},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, td, append(append([]string{"check"}, tt.args...), "sample-run")...)
		if code != tt.code || (tt.out != "" && out != tt.out) {
			t.Errorf("check %v: exit %d, want %d; stdout:\n%s\nstderr: %s", tt.args, code, tt.code, out, errs)
		}
	}
	_, all, _ := runCLI(t, td, "check", "sample-run")
	if _, both, _ := runCLI(t, td, "check", "--code", "unfielded-line", "--code", "unindented-continuation", "sample-run"); both != all {
		t.Errorf("both codes given: output differs from no --code")
	}
	code, out, errs := runCLI(t, td, "check", "--code", "more-warnings", "sample-run")
	if first, _, _ := strings.Cut(errs, "\n"); code != 2 || out != "" || !strings.Contains(first, `invalid code "more-warnings"`) {
		t.Errorf("unknown code: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// No diagnostic at all: the summary prints nothing.
	clean := t.TempDir()
	os.MkdirAll(filepath.Join(clean, "episode-1", "a"), 0o755)
	os.WriteFile(filepath.Join(clean, "episode-1", "a", "a.log"), []byte("2026-10-21 18:00:00 INFO  [s] [c] A fine\n"), 0o644)
	if code, out, _ := runCLI(t, td, "check", "--summary", clean); code != 0 || out != "" {
		t.Errorf("clean run, --summary: exit %d, output %q", code, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, t.TempDir(), "version")
	if code != 0 || !strings.HasPrefix(out, "runls ") {
		t.Fatalf("exit %d, %q", code, out)
	}
}

// TestSearchQueryOfManyTerms: `runls search` of 100,000 distinct terms (issue
// 8) exits 2 with a one-line error naming query, the count and the limit,
// then the usage (spec §10), and costs memory in proportion to the query
// (measured: ~19 MB for its 690 KB, sample run's index included; the bound,
// 64 MiB, leaves room for change, and anything per pair of terms would be
// far past it).
func TestSearchQueryOfManyTerms(t *testing.T) {
	td := testdata(t)
	args := append([]string{"search", "sample-run"}, manyWords(100000)...)
	var code int
	var out, errs string
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, out, errs = runCLI(t, td, args...)
	runtime.ReadMemStats(&after)
	first, rest, _ := strings.Cut(errs, "\n")
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	want := "invalid query \"100000 terms\": at most " + strconv.Itoa(retriever.MaxQueryTerms) + " distinct terms"
	if !strings.Contains(first, want) {
		t.Errorf("first stderr line %q, want it to say %q", first, want)
	}
	if !strings.HasPrefix(rest, "usage:") {
		t.Errorf("after the error line, stderr holds %q, want the usage", rest)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes for a query of %d bytes", alloc, len(strings.Join(args, " ")))
	if alloc > 64<<20 {
		t.Errorf("allocated %d bytes, want at most %d", alloc, 64<<20)
	}
}
