package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"runls/internal/store"
	"runls/retriever"
)

// TestMain points the cache of every command the tests run (and of the
// binaries they start) at a temporary folder, never the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runls-cmd-test-cache-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv(store.EnvDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "4K": 4 << 10, "4k": 4 << 10, "500M": 500 << 20, "500MB": 500 << 20,
		"4G": 4 << 30, "4GiB": 4 << 30, "2T": 2 << 40,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "G", "4X", "1.5G", "99999999999T"} {
		if n, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, n)
		}
	}
}

// Each command that opens a run takes the cache flags: --cache-dir (or
// RUNLS_CACHE_DIR) is where its entry goes, --no-cache keeps none, and a
// bad --cache-max is refused naming the flag.
func TestCacheFlagsOnEveryCommand(t *testing.T) {
	run := filepath.Join(testdata(t), "sample-run")
	commands := map[string][]string{
		"search":  {"search", "--episode", "episode-2", "--conversation", "conv-1", run, "deploy"},
		"check":   {"check", run},
		"records": {"records", run, "episode-2"},
	}
	for name, args := range commands {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			runCLI(t, t.TempDir(), append(args[:1:1], append([]string{"--cache-dir", dir}, args[1:]...)...)...)
			if n := committed(t, dir); n != 1 {
				t.Errorf("--cache-dir: %d entries, want 1", n)
			}
			off := filepath.Join(t.TempDir(), "off")
			t.Setenv(store.EnvDir, off)
			runCLI(t, t.TempDir(), append(args[:1:1], append([]string{"--no-cache"}, args[1:]...)...)...)
			if _, err := os.Stat(off); !os.IsNotExist(err) {
				t.Errorf("--no-cache made the cache folder (%v)", err)
			}
			runCLI(t, t.TempDir(), args...)
			if n := committed(t, off); n != 1 {
				t.Errorf("RUNLS_CACHE_DIR: %d entries, want 1", n)
			}
			code, _, errs := runCLI(t, t.TempDir(), append(args[:1:1], append([]string{"--cache-max", "lots"}, args[1:]...)...)...)
			if code != 2 || !strings.Contains(errs, "--cache-max") {
				t.Errorf("--cache-max lots: exit %d, %q", code, errs)
			}
		})
	}
	for _, args := range [][]string{{"serve", "--cache-max", "lots"}, {"mcp", "--cache-max", "lots", run}} {
		code, _, errs := runCLI(t, t.TempDir(), args...)
		if code != 2 || !strings.Contains(errs, "--cache-max") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}

// committed counts the committed entries of the cache folder dir.
func committed(t *testing.T, dir string) int {
	t.Helper()
	root, err := store.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := root.List()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, info := range infos {
		if info.Err == nil {
			n++
		}
	}
	return n
}

// `runls cache list RUN` says what a reopen of the run would read again.
func TestCacheListSaysWhatAReopenReads(t *testing.T) {
	run := copySample(t)
	dir := filepath.Join(t.TempDir(), "cache")
	old := time.Now().Add(-time.Hour)
	filepath.Walk(run, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	runCLI(t, run, "search", "--cache-dir", dir, run, "deploy")
	code, out, errs := runCLI(t, run, "cache", "list", "--cache-dir", dir, run)
	if code != 0 || !strings.Contains(out, "a reopen reads 0 B of 24 files: 24 unchanged, 0 grown") {
		t.Fatalf("exit %d, %s%s", code, out, errs)
	}
	f, err := os.OpenFile(filepath.Join(run, "episode-2", "bob", "plan.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("one more line\n")
	f.Close()
	os.Remove(filepath.Join(run, "episode-1", "bob", "bob.history"))
	_, out, _ = runCLI(t, run, "cache", "list", "--cache-dir", dir, run)
	if !strings.Contains(out, "of 23 files: 22 unchanged, 1 grown, 0 read again, 0 new, 1 gone") {
		t.Errorf("after an append and a deletion:\n%s", out)
	}
}

// Two servers and a CLI on one run and cache at once: each answers the same,
// one writes the entry, nothing deadlocks, and the entry is whole after.
func TestCacheTwoServersAndACLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)
	dir := filepath.Join(t.TempDir(), "cache")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	search := map[string]any{"query": "deploy database migration"}
	results := make([]string, 3)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, cmd, stderr, _ := startServe(ctx, t, bin, run, "--cache-dir", dir, "--log-level", "debug")
			var got retriever.Result
			if _, err := conn.Call(ctx, "run/search", search, &got); err != nil {
				t.Errorf("server %d: run/search: %v", i, err)
			}
			b, _ := json.Marshal(got)
			results[i] = string(b)
			conn.Call(ctx, protocol.MethodShutdown, nil, nil)
			conn.Notify(ctx, protocol.MethodExit, nil)
			if err := cmd.Wait(); err != nil {
				t.Errorf("server %d: %v\n%s", i, err, stderr)
			}
			conn.Close()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		out, err := exec.CommandContext(ctx, bin, "search", "--json", "--cache-dir", dir,
			"--episode", "episode-2", "--conversation", "conv-1", run, "deploy database migration").Output()
		if err != nil {
			t.Errorf("runls search: %v", err)
		}
		results[2] = strings.TrimSpace(string(out))
	}()
	wg.Wait()
	if results[0] == "" || results[0] != results[1] || results[0] != results[2] {
		t.Errorf("answers differ:\n%s\n%s\n%s", results[0], results[1], results[2])
	}
	root, err := store.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := root.List()
	if err != nil || len(infos) != 1 || infos[0].Err != nil {
		t.Fatalf("entries %+v, %v", infos, err)
	}
	if _, err := store.DecodeFileTable(infos[0].Caller); err != nil {
		t.Errorf("file table: %v", err)
	}
}

// A damaged entry (the manifest cut, a byte flipped in it) is dropped with
// one warning, the answer is a fresh index's, and the entry is written
// again; a foreign file beside it is removed (said at INFO, which the
// command line does not print: nothing was lost).
func TestCacheDamagedEntryIsDroppedOnce(t *testing.T) {
	run := copySample(t)
	args := []string{"--episode", "episode-2", "--conversation", "conv-1", run, "deploy database migration"}
	_, want, _ := runCLI(t, run, append([]string{"search", "--no-cache"}, args...)...)
	for name, damage := range map[string]func(entry string) error{
		"cut": func(entry string) error { return os.Truncate(filepath.Join(entry, "manifest"), 20) },
		"flipped": func(entry string) error {
			p := filepath.Join(entry, "manifest")
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0x40
			return os.WriteFile(p, b, 0o600)
		},
		"foreign file": func(entry string) error {
			return os.WriteFile(filepath.Join(entry, "notes.txt"), []byte("not the cache's"), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			search := append([]string{"search", "--cache-dir", dir}, args...)
			runCLI(t, run, search...)
			root, err := store.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			infos, err := root.List()
			if err != nil || len(infos) != 1 {
				t.Fatalf("entries %+v %v", infos, err)
			}
			if err := damage(filepath.Join(dir, infos[0].Key)); err != nil {
				t.Fatal(err)
			}
			code, got, errs := runCLI(t, run, search...)
			if code != 0 || got != want {
				t.Errorf("exit %d, answer\n%s\nwant\n%s", code, got, want)
			}
			wantWarns := 1
			if name == "foreign file" {
				wantWarns = 0
				if _, err := os.Stat(filepath.Join(dir, infos[0].Key, "notes.txt")); !os.IsNotExist(err) {
					t.Errorf("the foreign file is still there (%v)", err)
				}
			}
			if n := warns(errs); n != wantWarns {
				t.Errorf("%d warnings, want %d:\n%s", n, wantWarns, errs)
			}
			if n := committed(t, dir); n != 1 {
				t.Errorf("%d committed entries after, want 1", n)
			}
			if _, _, errs = runCLI(t, run, search...); strings.Contains(errs, "cache entry") {
				t.Errorf("said again on the next open:\n%s", errs)
			}
		})
	}
}
