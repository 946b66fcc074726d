package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runls/retriever"
)

// runls records (spec §13): text blocks, JSON, exit status, flags anywhere,
// help, bad values, masking, paging.

func TestRecordsOutputAndExitCodes(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "records", "--conversation", "conv-1", "--limit", "6", "sample-run", "episode-2")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := "" +
		"sample-run/episode-2/alice/alice.history:2: 2026-10-21 18:00:02 alice [conv-1]\n" +
		"2026-10-21 18:00:02 [running] [conv-1] Alice was told: Deploy the billing service once the database migration passes.\n" +
		"sample-run/episode-2/bob/bob.history:2: 2026-10-21 18:00:15 bob [conv-1]\n" +
		"2026-10-21 18:00:15 [running] [conv-1] Bob was told: Fix the failing database migration, then tell Alice when it is safe to deploy.\n" +
		"sample-run/episode-2/alice/alice.history:3: 2026-10-21 18:00:40 alice [conv-1]\n" +
		"2026-10-21 18:00:40 [running] [conv-1] Alice said: I will wait for Bob's migration, then deploy to staging first.\n" +
		"sample-run/episode-2/alice/alice.log:3: 2026-10-21 18:00:41.007 INFO alice [conv-1]\n" +
		"2026-10-21 18:00:41.007 INFO  [running] [conv-1] Alice said: I will wait for Bob's migration, then deploy to staging first.\n" +
		"sample-run/episode-2/bob/bob.log:2: 2026-10-21 18:01:00.000 DEBUG bob [conv-1]\n" +
		"2026-10-21 18:01:00.000 DEBUG [running] [conv-1] Bob running migration dry-run against staging\n" +
		"sample-run/episode-2/bob/bob.log:3: 2026-10-21 18:01:02.310 ERROR bob [conv-1]\n" +
		"2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed\n" +
		"java.lang.IllegalStateException: column \"currency\" of relation \"invoices\" already exists\n" +
		"\tat com.example.billing.Migrator.apply(Migrator.java:88)\n" +
		"\tat com.example.billing.Migrator.run(Migrator.java:42)\n" +
		"\tat com.example.billing.Main.main(Main.java:17)\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if !strings.HasPrefix(errs, "runls: note: the list goes on after these 6 records: add --cursor ") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q", errs)
	}
	// The cursor continues; flags may follow the run folder and the episode.
	_, rest, _ := strings.Cut(errs, "--cursor ")
	cursor, _, _ := strings.Cut(rest, " ")
	code, out, errs = runCLI(t, td, "records", "sample-run", "episode-2", "--conversation", "conv-1", "--cursor", cursor, "--limit", "1")
	if code != 0 || !strings.HasPrefix(out, "sample-run/episode-2/alice/alice.log:4: 2026-10-21 18:01:12,500 TRACE alice [conv-1]\n") || !strings.Contains(errs, "--cursor") {
		t.Errorf("next page: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// The last page says nothing more; a line before the first record has
	// no time and no conversation in its header.
	dir := t.TempDir()
	write(t, filepath.Join(dir, "run/episode-1/a/a.log"), "--- opened ---\n2026-10-21 18:00:00 WARN  [running] [-] A late\n")
	code, out, errs = runCLI(t, dir, "records", "run", "episode-1")
	if code != 0 || errs != "" || out != "run/episode-1/a/a.log:1: a\n--- opened ---\nrun/episode-1/a/a.log:2: 2026-10-21 18:00:00 WARN a [-]\n2026-10-21 18:00:00 WARN  [running] [-] A late\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{
		{"records", "sample-run", "episode-9"},
		{"records", "--conversation", "conv-9", "sample-run", "episode-2"},
		{"records", "--from", "2030-01-01 00:00:00", "sample-run", "episode-2"},
	} {
		// Notes say why where a value is not in the run (TestRecordsNotes).
		if code, out, errs := runCLI(t, td, args...); code != 1 || out != "" || (errs != "" && !strings.HasPrefix(errs, "runls: note: ")) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and nothing but notes", args, code, out, errs)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsJSON: --json is the run/records result, the engine's.
func TestRecordsJSON(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "records", "--json", "--agent", "bob", "--min-level", "WARN", "--limit", "1", "sample-run", "episode-2")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	ix, err := retriever.Open(t.Context(), retriever.Options{Root: filepath.Join(td, "sample-run")})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	want, err := ix.Records(t.Context(), retriever.RecordsRequest{Episode: "episode-2", Agent: "bob", MinLevel: "WARN", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(data)+"\n" || want.Cursor == nil || len(want.Records) != 1 {
		t.Errorf("--json:\n%s\nwant\n%s", out, data)
	}
}

func TestRecordsHelp(t *testing.T) {
	code, out, errs := runCLI(t, t.TempDir(), "records", "--help")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: runls records [flags] RUN_FOLDER episode-N\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, flag := range []string{"--agent A", "--conversation C", "--min-level L", "--from T", "--to T", "--limit N", "--cursor C", "--mask ", "--json "} {
		n := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  "+flag) && len(strings.Fields(l)) > 3 {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d help lines for %s:\n%s", n, flag, out)
		}
	}
}

func TestRecordsBadInput(t *testing.T) {
	td := testdata(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"records", "sample-run"}, "needs a run folder and an episode"},
		{[]string{"records", "sample-run", "episode-2", "extra"}, "needs a run folder and an episode"},
		{[]string{"records", "sample-run", "2"}, `episode "2"`},
		{[]string{"records", "--agent", "../x", "sample-run", "episode-2"}, `agent "../x"`},
		{[]string{"records", "--min-level", "LOUD", "sample-run", "episode-2"}, `minLevel "LOUD"`},
		{[]string{"records", "--from", "2026-10-21", "sample-run", "episode-2"}, `from "2026-10-21"`},
		{[]string{"records", "--to", "2026-10-21 18:00:00,500", "sample-run", "episode-2"}, `to "2026-10-21 18:00:00,500"`},
		{[]string{"records", "--from", "2026-10-21 19:00:00", "--to", "2026-10-21 18:00:00", "sample-run", "episode-2"}, `invalid to`},
		{[]string{"records", "--limit", "0", "sample-run", "episode-2"}, `limit "0"`},
		{[]string{"records", "--limit", "10001", "sample-run", "episode-2"}, `limit "10001"`},
		{[]string{"records", "--limit", "ten", "sample-run", "episode-2"}, `limit "ten"`},
		{[]string{"records", "--cursor", "more", "sample-run", "episode-2"}, `cursor "more"`},
		{[]string{"records", "--interpreter", "rules.json", "sample-run", "episode-2"}, "interpreter"},
		{[]string{"records", "missing-run", "episode-2"}, "missing-run"},
	} {
		code, out, errs := runCLI(t, td, tt.args...)
		first := strings.SplitN(errs, "\n", 2)[0]
		if code != 2 || out != "" || !strings.Contains(first, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, first stderr line %q; want 2 and %q", tt.args, code, out, first, tt.want)
		}
	}
	// After "--" every argument is positional.
	if code, _, errs := runCLI(t, td, "records", "--", "sample-run", "--json"); code != 2 || !strings.Contains(errs, `episode "--json"`) {
		t.Errorf("after --: exit %d, stderr %q", code, errs)
	}
}

func TestRecordsMask(t *testing.T) {
	dir := t.TempDir()
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	write(t, filepath.Join(dir, "run/episode-1/a/a.history"), ""+
		"2026-10-21 18:00:00 [running] [conv-1] A got "+token+"\n"+
		"  and read /home/a/.ssh/id_rsa\n")
	for _, mode := range []string{"", "--json"} {
		args := []string{"records", "--mask", "run", "episode-1"}
		if mode != "" {
			args = append(args, mode)
		}
		code, out, _ := runCLI(t, dir, args...)
		if mode == "--json" {
			var res retriever.RecordsResult
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Records) != 1 {
				t.Fatalf("%v: %v %s", args, err, out)
			}
			out = res.Records[0].Text + " " + *res.Records[0].Conversation
		}
		if code != 0 || strings.Contains(out, token) || strings.Contains(out, "/home/a") || !strings.Contains(out, "<secret>") || !strings.Contains(out, "<path>") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
	}
	if _, out, _ := runCLI(t, dir, "records", "run", "episode-1"); !strings.Contains(out, token) {
		t.Errorf("unmasked:\n%s", out)
	}
}

// TestRecordsNotes: records says on stderr what its filters matched nothing
// of (spec §13), as search does, and exits 1 when nothing is listed.
func TestRecordsNotes(t *testing.T) {
	td := testdata(t)
	tests := []struct {
		args []string
		code int
		note string
	}{
		{[]string{"--agent", "Bob"}, 1, "runls: note: the run has no agent folder named Bob (bob differs only in case); try --agent bob\n"},
		{[]string{"--conversation", "conv-99"}, 1, "runls: note: no record of episode-2 was written in conversation conv-99\n"},
		{[]string{"--agent", "bob", "--conversation", "conv-99"}, 1, "runls: note: no record of episode-2 was written in conversation conv-99\n"},
		{[]string{"--conversation", "conv-1"}, 0, ""},
	}
	for _, tt := range tests {
		args := append([]string{"records", "sample-run", "episode-2"}, tt.args...)
		code, _, errs := runCLI(t, td, args...)
		if code != tt.code || errs != tt.note {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tt.args, code, errs, tt.code, tt.note)
		}
	}
	code, _, errs := runCLI(t, td, "records", "sample-run", "episode-10", "--agent", "bob")
	if code != 1 || errs != "runls: note: episode-10 has no agent folder named bob\n" {
		t.Errorf("an agent of the run absent from the episode: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI(t, td, "records", "sample-run", "episode-9")
	if code != 1 || errs != "runls: note: the run has no folder episode-9\n" {
		t.Errorf("an episode with no folder: exit %d, %q", code, errs)
	}
}

// TestRecordsAt: --at PATH:LINE (PATH relative to the run folder) lists the
// page that holds the record, a continuation line meaning its record; the
// flag may follow the arguments; a bad value exits 2 naming at.
func TestRecordsAt(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "records", "sample-run", "episode-2", "--at", "episode-2/bob/bob.log:5", "--limit", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d, %s", code, errs)
	}
	var res retriever.RecordsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.AtIndex == nil || len(res.Records) != 4 || res.Records[*res.AtIndex].Location.Range.Start.Line != 2 ||
		!strings.Contains(res.Records[*res.AtIndex].Text, "migration dry-run failed") || res.PreviousCursor == nil || res.Cursor == nil {
		t.Errorf("at line 5 of bob.log (a stack trace line of the record at line 3): %s", out)
	}
	// The previous page ends just before it.
	_, prev, _ := runCLI(t, td, "records", "sample-run", "episode-2", "--cursor", *res.PreviousCursor, "--limit", "4", "--json")
	var back retriever.RecordsResult
	if err := json.Unmarshal([]byte(prev), &back); err != nil || len(back.Records) == 0 || back.Cursor == nil {
		t.Fatalf("previous page: %v %s", err, prev)
	}
	for _, bad := range []string{"episode-2/bob/bob.log", "episode-2/bob/bob.log:0", "../x.log:1", "episode-2/bob/nope.log:1", "episode-3/bob/bob.log:1"} {
		if code, _, errs := runCLI(t, td, "records", "sample-run", "episode-2", "--at", bad); code != 2 || !strings.Contains(errs, "invalid at") {
			t.Errorf("--at %s: exit %d, %q", bad, code, errs)
		}
	}
}
