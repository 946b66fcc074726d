package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runls/retriever"
)

// A run of other log layouts, JSON lines and transcripts beside the run's
// own files (issue 31), through the command line.

// mixedLayoutRun writes recordformat's golden samples into a run under dir:
// the run's own files in episode-1/a, the others beside them.
func mixedLayoutRun(t *testing.T, dir string) {
	t.Helper()
	samples := map[string]string{
		"own.log": "episode-1/a/a.log", "own.history": "episode-1/a/a.history",
		"claude-session.jsonl": "episode-1/a/session.jsonl", "codex-rollout.jsonl": "episode-1/a/rollout.jsonl",
		"log4j-unpadded.log": "episode-1/tools/shop.log", "python.log": "episode-1/tools/agentbot.log",
		"python-basic.log": "episode-1/tools/basic.log", "syslog3164.log": "episode-1/tools/syslog.log",
		"syslog5424.log": "episode-1/tools/ietf.log", "zap.log": "episode-1/tools/zap.log",
		"slog.jsonl": "episode-1/tools/slog.jsonl", "pino.jsonl": "episode-1/tools/pino.jsonl",
		"iso8601.log": "episode-1/tools/server.log", "logcat.log": "episode-1/tools/logcat.log",
	}
	for name, rel := range samples {
		b, err := os.ReadFile(filepath.Join("..", "..", "recordformat", "testdata", "layouts", name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "run", filepath.FromSlash(rel)), string(b))
	}
}

// TestCheckWarnsOnlyAboutTheRunsOwnLayout: `runls check` warns about the
// files in the run's own layout; each foreign log gets one info line naming
// its layout, and no warning.
func TestCheckWarnsOnlyAboutTheRunsOwnLayout(t *testing.T) {
	dir := t.TempDir()
	mixedLayoutRun(t, dir)
	code, out, errs := runCLI(t, dir, "check", "--no-cache", "run")
	if code != 1 || errs != "" {
		t.Fatalf("exit %d (the run's own a.log has a warning), stderr %q", code, errs)
	}
	infos := 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.Contains(l, ": warning: ") || strings.Contains(l, ": hint: "):
			if !strings.HasPrefix(l, "run/episode-1/a/a.log:") {
				t.Errorf("a warning about a file not in the run's layout: %s", l)
			}
		case strings.Contains(l, ": info: ") && strings.HasSuffix(l, "[foreign-layout]"):
			infos++
			if !strings.Contains(l, ":1:1: info: read as a foreign log in the ") {
				t.Errorf("info line %q", l)
			}
		default:
			t.Errorf("line %q", l)
		}
	}
	if infos != 8 {
		t.Errorf("%d foreign-layout lines, want one for each of the 8 foreign logs:\n%s", infos, out)
	}
	if code, out, _ := runCLI(t, dir, "check", "--no-cache", "--code", "foreign-layout", "run"); code != 0 || strings.Count(out, "\n") != 8 {
		t.Errorf("--code foreign-layout: exit %d\n%s", code, out)
	}
}

// TestRecordsMinLevelEveryLayout: `runls records --min-level ERROR` lists
// ERROR records of every layout and none at another level.
func TestRecordsMinLevelEveryLayout(t *testing.T) {
	dir := t.TempDir()
	mixedLayoutRun(t, dir)
	code, out, errs := runCLI(t, dir, "records", "--no-cache", "--json", "--min-level", "ERROR", "run", "episode-1")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var res retriever.RecordsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, r := range res.Records {
		if r.Level == nil {
			t.Errorf("%s:%d has no level: minLevel leaves out records without a level (§13 rev 3)", r.Location.URI, r.Location.Range.Start.Line+1)
			continue
		}
		if *r.Level != "ERROR" {
			t.Errorf("%s", out)
		}
		files[filepath.Base(r.Location.URI)] = true
	}
	for _, f := range []string{"a.log", "shop.log", "agentbot.log", "basic.log", "syslog.log", "ietf.log", "zap.log", "server.log", "logcat.log"} {
		if !files[f] {
			t.Errorf("no ERROR record of %s: %v", f, files)
		}
	}
}

// TestSearchJSONLinesGivesProse: search returns a JSON line's message text,
// never its escaped JSON, in text and JSON output alike.
func TestSearchJSONLinesGivesProse(t *testing.T) {
	dir := t.TempDir()
	mixedLayoutRun(t, dir)
	for _, q := range [][]string{{"janitor", "goroutine"}, {"rename", "verbose"}, {"disk", "full"}, {"upstream", "error"}, {"tool", "failed"}, {"role", "assistant", "content", "type", "text"}} {
		args := append([]string{"search", "--no-cache", "--json", "--top-k", "10", "run"}, q...)
		_, out, _ := runCLI(t, dir, args...)
		var res retriever.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			if strings.Contains(it.Text, `":`) || strings.Contains(it.Text, `\"`) || strings.Contains(it.Text, `\n`) || strings.HasPrefix(it.Text, "{") {
				t.Errorf("%v: escaped JSON %q", q, it.Text)
			}
		}
		if q[0] != "role" && len(res.Items) == 0 {
			t.Errorf("%v: nothing found", q)
		}
	}
	_, out, _ := runCLI(t, dir, "search", "--no-cache", "run", "janitor", "goroutine")
	if !strings.Contains(out, "run/episode-1/a/session.jsonl:5:1: The test sleeps for 10 ms and expects the entry to be gone — a race with the janitor goroutine.\n") {
		t.Errorf("text output:\n%s", out)
	}
}
