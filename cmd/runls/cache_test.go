package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"runls/internal/store"
)

// cacheWith makes a cache folder holding one committed entry per
// (run, configuration) given.
func cacheWith(t *testing.T, entries map[string][]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache")
	root, err := store.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for run, configs := range entries {
		for _, c := range configs {
			e, err := root.Open(run, []byte(c), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := e.CreateBlob()
			w.Write([]byte(strings.Repeat("x", 2000)))
			ref, err := w.Commit()
			if err != nil {
				t.Fatal(err)
			}
			s, err := e.Commit([]store.BlobRef{ref}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			e.Close()
		}
	}
	return dir
}

func TestCacheListAndClear(t *testing.T) {
	tmp := t.TempDir()
	runA, runB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	os.Mkdir(runA, 0o755)
	os.Mkdir(runB, 0o755)
	dir := cacheWith(t, map[string][]string{runA: {"mask=off", "mask=on"}, runB: {"\x00binary"}})

	code, out, errs := runCLI(t, tmp, "cache", "list", "--cache-dir", dir)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "RUN") || !strings.HasPrefix(lines[4], "3 entries, ") {
		t.Fatalf("list:\n%s", out)
	}
	row := regexp.MustCompile(`^(\S+)\s+\d+\.\d KiB\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+(\S+)$`)
	seen := map[string]bool{}
	for _, l := range lines[1:4] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("row %q", l)
		}
		seen[filepath.Base(m[1])+" "+m[2]] = true
	}
	if !seen["a mask=off"] || !seen["a mask=on"] || len(seen) != 3 {
		t.Errorf("rows %v", seen)
	}

	// clear RUN (flags after it too) removes that run's entries only.
	code, out, _ = runCLI(t, tmp, "cache", "clear", "a", "--cache-dir", dir)
	if code != 0 || !strings.HasPrefix(out, "removed 2 entries") {
		t.Fatalf("clear a: exit %d, %s", code, out)
	}
	t.Setenv(store.EnvDir, dir)
	if code, out, _ = runCLI(t, tmp, "cache", "list"); !strings.Contains(out, "1 entries") || !strings.Contains(out, "sha256:") {
		t.Errorf("after clear a (RUNLS_CACHE_DIR):\n%s", out)
	}

	// An entry a running runls writes is kept: exit 1.
	root, _ := store.OpenRoot(dir)
	e, err := root.Open(runB, []byte("\x00binary"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, tmp, "cache", "clear")
	if code != 1 || !strings.HasPrefix(out, "removed 0 entries") || !strings.Contains(errs, "in use") {
		t.Errorf("clear in use: exit %d, %q, %q", code, out, errs)
	}
	e.Close()
	if code, out, _ = runCLI(t, tmp, "cache", "clear"); code != 0 || !strings.HasPrefix(out, "removed 1 entries") {
		t.Errorf("clear: exit %d, %s", code, out)
	}
	if _, out, _ = runCLI(t, tmp, "cache", "list"); !strings.HasPrefix(out, "no entries in ") {
		t.Errorf("empty list: %q", out)
	}
}

func TestCacheBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"cache"}, {"cache", "drop"}, {"cache", "list", "a", "b"}, {"cache", "clear", "a", "b"}, {"cache", "list", "--bogus"},
	} {
		code, out, errs := runCLI(t, dir, append(args, "--cache-dir", dir)...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "runls: ") {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errs)
		}
	}
}
