package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"runls/retriever"
)

func TestFailuresOutputAndExitCodes(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "failures", "sample-run")
	want := "" +
		"1  migration dry-run failed  (bob, episode-2, 2026-10-21 18:01:02.310 … 2026-10-21 18:01:02.310)\n" +
		"sample-run/episode-2/bob/bob.log:3:\n" +
		"1  could not fetch the CI logs  (bob, episode-3, 2026-10-22 10:02:00.000 … 2026-10-22 10:02:00.000)\n" +
		"sample-run/episode-3/bob/bob.log:2:\n"
	if code != 0 || errs != "" || out != want {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, out, want)
	}
	// Nothing: exit 1; a bad value: 2, naming it.
	if code, out, _ := runCLI(t, td, "failures", "sample-run", "--episode", "episode-10"); code != 1 || out != "" {
		t.Errorf("no failure: exit %d, %q", code, out)
	}
	if code, _, errs := runCLI(t, td, "failures", "sample-run", "--min-level", "fatal"); code != 2 || !strings.Contains(errs, "minLevel") {
		t.Errorf("bad level: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, td, "failures"); code != 2 || !strings.Contains(errs, "usage: runls failures") {
		t.Errorf("no run folder: exit %d, %q", code, errs)
	}
}

// TestFailuresJSON: --json prints the engine's answer, and the flags may
// follow the run folder.
func TestFailuresJSON(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "failures", "sample-run", "--json", "--min-level", "WARN", "--agent", "bob")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, %s", code, errs)
	}
	var got retriever.FailuresResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	ix, err := retriever.Open(t.Context(), retriever.Options{Root: filepath.Join(td, "sample-run")})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	want, err := ix.Failures(t.Context(), retriever.FailuresRequest{MinLevel: "WARN", Agent: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Groups {
		want.Groups[i].Paths = nil // not in the JSON
	}
	if !reflect.DeepEqual(got.Groups, want.Groups) || len(got.Groups) < 3 {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestFailuresMask(t *testing.T) {
	dir := t.TempDir()
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	write(t, filepath.Join(dir, "run/episode-1/a/a.log"), ""+
		"2026-10-21 18:00:00 ERROR [running] [conv-1] A push refused for "+token+" at /home/a/repo\n")
	code, out, _ := runCLI(t, dir, "failures", "run", "--mask")
	if code != 0 || strings.Contains(out, token) || !strings.Contains(out, "<secret>") {
		t.Errorf("masked: exit %d:\n%s", code, out)
	}
	if _, out, _ := runCLI(t, dir, "failures", "run"); !strings.Contains(out, "ghp_") {
		t.Errorf("unmasked: %s", out)
	}
}

// TestFailuresPattern: --pattern prints that one group and every record of
// it listed; a pattern no group has: exit 1.
func TestFailuresPattern(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "run/episode-1/a/a.log"), ""+
		"2026-10-21 18:00:00 ERROR [running] [conv-1] A tool call 7 failed\n"+
		"2026-10-21 18:00:01 ERROR [running] [conv-1] A disk full\n"+
		"2026-10-21 18:00:03 ERROR [running] [conv-1] A tool call 9 failed\n")
	write(t, filepath.Join(dir, "run/episode-2/b/b.log"), ""+
		"2026-10-21 18:00:02 ERROR [running] [conv-1] B tool call 12 failed\n")
	code, out, errs := runCLI(t, dir, "failures", "run", "--pattern", "tool call <n> failed")
	want := "" +
		"3  tool call <n> failed  (a b, episode-1 episode-2, 2026-10-21 18:00:00 … 2026-10-21 18:00:03)\n" +
		"run/episode-1/a/a.log:1:\n" +
		"run/episode-2/b/b.log:1:\n" +
		"run/episode-1/a/a.log:3:\n"
	if code != 0 || errs != "" || out != want {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, out, want)
	}
	if code, out, _ := runCLI(t, dir, "failures", "--pattern", "tool call 7 failed", "run"); code != 1 || out != "" {
		t.Errorf("a pattern no group has: exit %d, %q; want 1 and nothing", code, out)
	}
	code, out, _ = runCLI(t, dir, "failures", "run", "--json", "--pattern", "disk full")
	var got retriever.FailuresResult
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Groups) != 1 || got.Groups[0].Count != 1 || len(got.Groups[0].Records) != 1 {
		t.Errorf("--json --pattern: exit %d, %v, %s", code, err, out)
	}
}
