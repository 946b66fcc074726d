package retriever

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"runls/internal/store"
	"runls/masking"
)

func cacheRoot(t *testing.T) *store.Root {
	t.Helper()
	root, err := store.OpenRoot(filepath.Join(t.TempDir(), "cache"))
	must(t, err)
	return root
}

// entries lists the cache's committed entries.
func entries(t *testing.T, root *store.Root) []store.EntryInfo {
	t.Helper()
	infos, err := root.List()
	must(t, err)
	return slices.DeleteFunc(infos, func(i store.EntryInfo) bool { return i.Err != nil })
}

// Another masking or interpreter setting is another entry (never the old
// text); the same setting is the same entry.
func TestCacheConfigurationNamesTheEntry(t *testing.T) {
	rulesA, err := ParseInterpreter([]byte(`{"rules": [{"match": "^told: ", "reading": "told"}]}`))
	must(t, err)
	rulesA2, err := ParseInterpreter([]byte(`{"rules": [{"match": "^told: ", "reading": "told"}]}`))
	must(t, err)
	rulesB, err := ParseInterpreter([]byte(`{"rules": [{"match": "^said: ", "reading": "said"}]}`))
	must(t, err)
	run := writeRun(t, map[string]string{"episode-1/alice/notes.txt": "a note\n"})
	configs := map[string][]byte{
		"plain":        cacheConfig(Options{}),
		"masked":       cacheConfig(Options{Masker: masking.HidingOutside(run)}),
		"rules A":      cacheConfig(Options{Interpreter: rulesA}),
		"rules B":      cacheConfig(Options{Interpreter: rulesB}),
		"masked rules": cacheConfig(Options{Interpreter: rulesA, Masker: masking.HidingOutside(run)}),
	}
	seen := map[string]string{}
	for name, c := range configs {
		if other, ok := seen[string(c)]; ok {
			t.Errorf("%s and %s share the configuration %q", name, other, c)
		}
		seen[string(c)] = name
	}
	if !bytes.Equal(cacheConfig(Options{Interpreter: rulesA}), cacheConfig(Options{Interpreter: rulesA2})) {
		t.Error("the same rules make two configurations")
	}
	if !bytes.Equal(cacheConfig(Options{Masker: masking.NoOp()}), configs["plain"]) {
		t.Error("the no-op masker is not masking off")
	}

	// Through the index: each setting commits its own entry.
	root := cacheRoot(t)
	for _, opts := range []Options{{}, {Masker: masking.HidingOutside(run)}, {Interpreter: rulesA}, {Interpreter: rulesB}, {}} {
		opts.Root, opts.Cache = run, CacheOptions{Root: root}
		ix, err := Open(context.Background(), opts)
		must(t, err)
		search(t, ix, allEvidence("note"))
		must(t, ix.Close())
	}
	if got := entries(t, root); len(got) != 4 {
		t.Errorf("%d entries, want 4: %+v", len(got), got)
	}
}

// The index commits its file table after the first indexing: by the
// writer's goroutine after a delay, never by a search, and at Close.
func TestCacheWritesAfterIndexingNotOnSearch(t *testing.T) {
	run := writeRun(t, map[string]string{
		"episode-1/alice/notes.txt":     "a note\n",
		"episode-1/alice/alice.history": rec("c1", "deploy"),
	})
	root := cacheRoot(t)
	ix := openTest(t, Options{Root: run, Cache: CacheOptions{Root: root}, cacheDelay: time.Hour})
	search(t, ix, allEvidence("note"))
	if got := entries(t, root); len(got) != 0 {
		t.Fatalf("a search wrote the entry: %+v", got)
	}
	want := fileTableOf(ix)
	must(t, ix.Close())
	got := entries(t, root)
	if len(got) != 1 {
		t.Fatalf("%d entries after Close, want 1", len(got))
	}
	table, err := store.DecodeFileTable(got[0].Caller)
	must(t, err)
	if len(table) != 2 || !slices.EqualFunc(table, want, func(a, b store.FileRecord) bool {
		return a.Path == b.Path && a.Size == b.Size && a.IndexedTo == b.IndexedTo && a.Head == b.Head && a.Tail == b.Tail && bytes.Equal(a.Carry, b.Carry)
	}) {
		t.Errorf("committed table %+v, want %+v", table, want)
	}

	// Debounced: the goroutine writes a change some time after it.
	ix = openTest(t, Options{Root: run, Cache: CacheOptions{Root: root}, cacheDelay: 10 * time.Millisecond})
	appendFile(t, run, "episode-1/alice/notes.txt", "another note\n")
	search(t, ix, allEvidence("note"))
	waitFor(t, "the debounced write", func() bool {
		e := entries(t, root)
		return len(e) == 1 && e[0].Generation == 2
	})
}

// Two indexes of one run and configuration at once (a second server, a CLI):
// one writes the entry, the other reads it and writes nothing, both answer;
// when the writer closes, the other becomes the writer at its next write.
func TestCacheOneWriterBesideReaders(t *testing.T) {
	run := writeRun(t, map[string]string{"episode-1/alice/notes.txt": "a note\n"})
	root := cacheRoot(t)
	opts := Options{Root: run, Cache: CacheOptions{Root: root}, cacheDelay: time.Hour}
	first := openTest(t, opts)
	second := openTest(t, opts)
	third := openTest(t, opts)
	if !first.cache.Entry().Writable() || second.cache.Entry().Writable() || third.cache.Entry().Writable() {
		t.Fatalf("writable: %v %v %v, want only the first", first.cache.Entry().Writable(), second.cache.Entry().Writable(), third.cache.Entry().Writable())
	}
	for _, ix := range []*Index{first, second, third} {
		if got := texts(search(t, ix, allEvidence("note"))); !slices.Equal(got, []string{"a note"}) {
			t.Errorf("search: %q", got)
		}
	}
	second.cache.WriteNow()
	if got := entries(t, root); len(got) != 0 {
		t.Fatalf("a reader wrote: %+v", got)
	}
	must(t, first.Close())
	if e := entries(t, root); len(e) != 1 || e[0].Generation != 1 {
		t.Fatalf("after the writer's close: %+v", e)
	}
	appendFile(t, run, "episode-1/alice/notes.txt", "another note\n")
	search(t, second, allEvidence("note"))
	second.cache.WriteNow()
	if !second.cache.Entry().Writable() {
		t.Fatal("the reader did not take over when the writer closed")
	}
	if e := entries(t, root); len(e) != 1 || e[0].Generation != 2 {
		t.Fatalf("after the new writer's write: %+v", e)
	}
	must(t, third.Close()) // a reader's close writes nothing
	if e := entries(t, root); len(e) != 1 || e[0].Generation != 2 {
		t.Fatalf("after a reader's close: %+v", e)
	}
}

// No entry for a folder that holds no run.
func TestCacheNoEntryOutsideARun(t *testing.T) {
	root := cacheRoot(t)
	ix := openTest(t, Options{Root: t.TempDir(), Cache: CacheOptions{Root: root}})
	search(t, ix, allEvidence("x"))
	must(t, ix.Close())
	if infos, err := root.List(); err != nil || len(infos) != 0 {
		t.Errorf("entries %+v, %v", infos, err)
	}
}

// A reopen that finds nothing changed reads no file and writes nothing (a
// server's, and a command's: OneShot), also when its entry alone is over
// --cache-max: the run's own entry is
// kept (removing it would make every open a first index) and read, not
// rewritten (docs/cache.md, Size).
func TestCacheReopenOverTheBoundKeepsTheEntry(t *testing.T) {
	run := writeRun(t, map[string]string{
		"episode-1/alice/notes.txt":     "a note\n",
		"episode-1/alice/alice.history": rec("c1", "deploy"),
	})
	// Written long ago: a file within the racy window of its read is
	// checked again at the reopen, and its new check time written.
	old := time.Now().Add(-time.Hour)
	for _, rel := range []string{"episode-1/alice/notes.txt", "episode-1/alice/alice.history"} {
		must(t, os.Chtimes(filepath.Join(run, rel), old, old))
	}
	root := cacheRoot(t)
	opts := Options{Root: run, Cache: CacheOptions{Root: root, MaxBytes: 1}}
	ix := openTest(t, opts)
	search(t, ix, allEvidence("note"))
	must(t, ix.Close())
	first := entries(t, root)
	if len(first) != 1 {
		t.Fatalf("%d entries after the first open, want 1", len(first))
	}
	for _, oneShot := range []bool{false, true} { // a server's reopen, a command's
		opts.OneShot = oneShot
		ix = openTest(t, opts)
		search(t, ix, allEvidence("note"))
		if content, _ := ix.BytesRead(); content != 0 {
			t.Errorf("one-shot %v: the reopen read %d bytes of the run, want 0", oneShot, content)
		}
		must(t, ix.Close())
		if got := entries(t, root); len(got) != 1 || got[0].Generation != first[0].Generation {
			t.Errorf("one-shot %v: entries after the reopen %+v, want the first open's (generation %d) kept as it was", oneShot, got, first[0].Generation)
		}
	}
}

// A file whose name is not UTF-8 (a Linux name is bytes) is a file like any
// other: the run's entry is written, and the reopen restores it, reads none
// of the run and answers as a fresh index, that file's piece among them.
// Before store.ValidFilePath the file table refused the name and every open
// of the run indexed it afresh.
func TestCacheEntryOfANameNotUTF8(t *testing.T) {
	odd := "episode-1/alice/bad-\xff\xfe.md"
	run := writeRunOrSkip(t, map[string]string{
		"episode-1/alice/notes.txt":     "a note\n",
		"episode-1/alice/alice.history": rec("c1", "deploy"),
		odd:                             "zanzibarite in an odd name\n",
	})
	root := cacheRoot(t)
	first, _ := reopened(t, Options{Root: run}, root)
	if items := search(t, first, allEvidence("zanzibarite")); len(items) != 1 {
		t.Fatalf("first open: %d items for the odd name's word, want 1", len(items))
	}
	must(t, first.Close())
	if got := entries(t, root); len(got) != 1 {
		t.Fatalf("%d entries after the first open, want 1", len(got))
	}
	ix := reopenedSame(t, Options{Root: run}, root)
	if content, _ := ix.BytesRead(); content != 0 {
		t.Errorf("the reopen read %d bytes of the run, want 0", content)
	}
	items := search(t, ix, allEvidence("zanzibarite"))
	if len(items) != 1 || !strings.HasSuffix(items[0].Location.URI, "/bad-%FF%FE.md") {
		t.Errorf("reopened: %+v, want the odd name's piece", items)
	}
}

// writeRunOrSkip is writeRun, skipping where the file system refuses a
// name (one not UTF-8 on macOS's).
func writeRunOrSkip(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe-\xff")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		t.Skipf("this file system refuses a name not UTF-8: %v", err)
	}
	must(t, os.Remove(probe))
	return writeRun(t, files)
}
