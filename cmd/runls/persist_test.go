package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBin runs the runls binary with args and gives its exit code, stdout
// and stderr.
func runBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// entryFiles gives the only entry folder of the cache dir and its files'
// contents by name (the lock aside).
func entryFiles(t *testing.T, dir string) (string, map[string][]byte) {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var entry string
	for _, n := range names {
		if n.IsDir() && !strings.HasPrefix(n.Name(), ".") {
			if entry != "" {
				t.Fatalf("two entries in %s", dir)
			}
			entry = filepath.Join(dir, n.Name())
		}
	}
	if entry == "" {
		t.Fatalf("no entry in %s", dir)
	}
	files := map[string][]byte{}
	list, err := os.ReadDir(entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range list {
		if f.Name() == "lock" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(entry, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name()] = b
	}
	return entry, files
}

// warns counts the warnings of a log: the server's WARN entries and the
// command line's plain `runls: warning:` lines.
func warns(log string) int {
	return strings.Count(log, "WARN") + strings.Count(log, warningPrefix)
}

// warningPrefix begins the command line's warnings on stderr (spec §10).
const warningPrefix = "runls: warning: "

// notes is a log without its WARN lines: what runls tells of the answer.
func notes(log string) string {
	var keep []string
	for _, l := range strings.SplitAfter(log, "\n") {
		if !strings.Contains(l, "WARN") && !strings.Contains(l, warningPrefix) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// Each cache file in turn truncated, a byte flipped in it, or missing, and
// a foreign file beside them (spec §15, issue 18): runls answers exactly as
// with no cache, says once what it dropped, and the next open finds the
// entry written again, whole.
func TestCacheCorruptionEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)
	dir := filepath.Join(t.TempDir(), "cache")
	query := []string{"search", "--episode", "episode-2", "--conversation", "conv-1", "--top-k", "50", run, "deploy", "database", "migration", "alice"}
	with := func(extra ...string) []string { return append(append([]string{query[0]}, extra...), query[1:]...) }

	code, want, wantErrs := runBin(t, bin, with("--no-cache")...)
	if code != 0 || want == "" || warns(wantErrs) != 0 {
		t.Fatalf("without cache: exit %d, stdout %q, stderr %q", code, want, wantErrs)
	}
	code, got, errs := runBin(t, bin, with("--cache-dir", dir)...)
	if code != 0 || got != want || errs != wantErrs {
		t.Fatalf("first open: exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, got, want)
	}
	entry, pristine := entryFiles(t, dir)
	if len(pristine) < 5 {
		t.Fatalf("the entry holds %d files, want a manifest and four blobs at least", len(pristine))
	}
	reset := func() {
		list, _ := os.ReadDir(entry)
		for _, f := range list {
			if f.Name() != "lock" {
				os.Remove(filepath.Join(entry, f.Name()))
			}
		}
		for name, b := range pristine {
			if err := os.WriteFile(filepath.Join(entry, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	reset()
	if code, got, errs := runBin(t, bin, with("--cache-dir", dir)...); code != 0 || got != want || errs != wantErrs {
		t.Fatalf("reopen: exit %d, stderr %q, stdout\n%s", code, errs, got)
	}

	type damage struct {
		name  string
		apply func(p string, b []byte) error
	}
	damages := []damage{
		{"truncated", func(p string, b []byte) error { return os.Truncate(p, int64(len(b)/2)) }},
		{"a byte flipped", func(p string, b []byte) error {
			c := bytes.Clone(b)
			c[len(c)/2+1] ^= 0x40
			return os.WriteFile(p, c, 0o600)
		}},
		{"missing", func(p string, _ []byte) error { return os.Remove(p) }},
	}
	for name := range pristine {
		for _, d := range damages {
			t.Run(name+" "+d.name, func(t *testing.T) {
				reset()
				if err := d.apply(filepath.Join(entry, name), pristine[name]); err != nil {
					t.Fatal(err)
				}
				code, got, errs := runBin(t, bin, with("--cache-dir", dir)...)
				if code != 0 || got != want || notes(errs) != wantErrs {
					t.Fatalf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errs, got, want)
				}
				// Without its manifest an entry has no commit: its blobs
				// are files no commit names, removed without a word.
				if name == "manifest" && d.name == "missing" {
					if warns(errs) != 0 {
						t.Errorf("an entry with no commit warned:\n%s", errs)
					}
				} else if warns(errs) != 1 || !strings.Contains(errs, "dropped") {
					t.Errorf("want one WARN saying what was dropped, stderr:\n%s", errs)
				}
				code, got, errs = runBin(t, bin, with("--cache-dir", dir)...)
				if code != 0 || got != want || errs != wantErrs {
					t.Errorf("the open after: exit %d, stderr %q, stdout\n%s", code, errs, got)
				}
			})
		}
	}
	t.Run("foreign file", func(t *testing.T) {
		reset()
		if err := os.WriteFile(filepath.Join(entry, "foreign.txt"), []byte("not ours"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, got, errs := runBin(t, bin, with("--cache-dir", dir)...)
		if code != 0 || got != want || errs != wantErrs {
			t.Fatalf("exit %d, stderr %q, stdout\n%s", code, errs, got)
		}
		if _, err := os.Stat(filepath.Join(entry, "foreign.txt")); err == nil {
			t.Error("the foreign file is still there")
		}
	})
}

// A kill -9 at any point of a write leaves an entry that the next open
// uses or drops, never one that answers wrongly: the run grows between
// rounds, so that each write is a new commit, and each round's answer is
// compared with runls' answer with no cache.
func TestCacheKilledWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)
	var notes strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&notes, "a long note %d about the deploy of shard %d\n", i, i%977)
	}
	big := filepath.Join(run, "episode-2", "alice", "big-notes.txt")
	if err := os.WriteFile(big, []byte(notes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cache")
	args := func(extra ...string) []string {
		return append(append([]string{"search"}, extra...), "--top-k", "20", run, "deploy", "shard", "round")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 8 {
		f, err := os.OpenFile(big, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "round %d of the deploy shard\n", round)
		f.Close()
		_, want, _ := runBin(t, bin, args("--no-cache")...)

		cmd := exec.Command(bin, args("--cache-dir", dir)...)
		cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(600)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		code, got, errs := runBin(t, bin, args("--cache-dir", dir)...)
		if code != 0 || got != want {
			t.Fatalf("round %d: exit %d, stderr %q, stdout\n%s\nwant\n%s", round, code, errs, got, want)
		}
		if warns(errs) > 1 {
			t.Errorf("round %d: more than one WARN:\n%s", round, errs)
		}
	}
}

// Two servers and a command line on one run and cache at once: each
// answers as with no cache, none deadlocks, and the entry they leave is
// whole (the next open says nothing).
func TestCacheTwoServersAndACommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)
	dir := filepath.Join(t.TempDir(), "cache")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	query := []string{"search", "--episode", "episode-2", "--conversation", "conv-1", run, "deploy", "database"}
	_, want, wantErrs := runBin(t, bin, append([]string{"search", "--no-cache"}, query[1:]...)...)

	type server struct {
		stop   func() error
		stderr *syncBuffer
	}
	var servers []server
	var wantSearch map[string]any
	for i := range 2 {
		conn, cmd, stderr, _ := startServe(ctx, t, bin, run, "--cache-dir", dir)
		var got map[string]any
		if _, err := conn.Call(ctx, "run/search", map[string]any{"query": "deploy database"}, &got); err != nil {
			t.Fatalf("server %d: run/search: %v", i, err)
		}
		if i == 0 {
			wantSearch = got
		} else if fmt.Sprint(got) != fmt.Sprint(wantSearch) {
			t.Errorf("the two servers answer otherwise:\n%v\n%v", got, wantSearch)
		}
		servers = append(servers, server{stop: func() error {
			conn.Call(ctx, "shutdown", nil, nil)
			conn.Notify(ctx, "exit", nil)
			return cmd.Wait()
		}, stderr: stderr})
	}
	for range 3 {
		if code, got, errs := runBin(t, bin, append([]string{"search", "--cache-dir", dir}, query[1:]...)...); code != 0 || got != want || errs != wantErrs {
			t.Errorf("the command line beside the servers: exit %d, stderr %q, stdout\n%s", code, errs, got)
		}
	}
	for i, s := range servers {
		if err := s.stop(); err != nil {
			t.Errorf("server %d: %v\n%s", i, err, s.stderr)
		}
		if warns(s.stderr.String()) != 0 {
			t.Errorf("server %d warned:\n%s", i, s.stderr)
		}
	}
	if code, got, errs := runBin(t, bin, append([]string{"search", "--cache-dir", dir}, query[1:]...)...); code != 0 || got != want || errs != wantErrs {
		t.Errorf("the open after: exit %d, stderr %q, stdout\n%s", code, errs, got)
	}
}

// A blob cut under a running server that mapped it (a read past the cut
// would raise SIGBUS): the server does not crash, answers as with no cache
// and says once that it dropped the entry.
func TestCacheBlobCutUnderTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)
	dir := filepath.Join(t.TempDir(), "cache")
	query := []string{"search", "--episode", "episode-2", "--conversation", "conv-1", run, "deploy", "database"}
	if code, _, errs := runBin(t, bin, append([]string{"search", "--cache-dir", dir}, query[1:]...)...); code != 0 || warns(errs) != 0 {
		t.Fatalf("first open: exit %d, %s", code, errs)
	}
	entry, files := entryFiles(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, cmd, stderr, _ := startServe(ctx, t, bin, run, "--cache-dir", dir)
	params := map[string]any{"query": "deploy database migration"}
	var before map[string]any
	if _, err := conn.Call(ctx, "run/search", params, &before); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if strings.HasSuffix(name, ".blob") {
			if err := os.Truncate(filepath.Join(entry, name), int64(len(b))/3); err != nil {
				t.Fatal(err)
			}
		}
	}
	var after map[string]any
	if _, err := conn.Call(ctx, "run/search", params, &after); err != nil {
		t.Fatalf("run/search after the cut: %v\n%s", err, stderr)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after the cut:\n%v\nbefore:\n%v", after, before)
	}
	conn.Call(ctx, "shutdown", nil, nil)
	conn.Notify(ctx, "exit", nil)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the server ended with %v\n%s", err, stderr)
	}
	if n := strings.Count(stderr.String(), "cut under the running server"); n != 1 || warns(stderr.String()) != 1 {
		t.Errorf("want one WARN of the cut, stderr:\n%s", stderr)
	}
}
