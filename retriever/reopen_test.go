package retriever

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runls/internal/store"
)

// The classification of spec §15 and issue 18's "What must hold": each case
// indexes a run whose files are older than the racy window, closes it (the
// file table is what it wrote), changes the run, and classifies every file.
func TestReopenClassification(t *testing.T) {
	const (
		hist  = "episode-1/alice/alice.history"
		notes = "episode-1/alice/notes.txt"
	)
	base := map[string]string{
		hist:  rec("c1", "deploy the billing service") + rec("c1", "migration passed"),
		notes: "a plain note\nanother note line\n",
		"episode-1/bob/bob.log": "2026-10-21 18:00:00.000 INFO [running] [c1] bob started\n" +
			"2026-10-21 18:00:01.000 INFO [running] [c1] bob continues\n  an indented line\n",
	}
	old := time.Now().Add(-time.Hour)
	cases := []struct {
		name   string
		change func(t *testing.T, root string)
		want   map[string]reopenClass // files not named: unchanged
		plan   ReopenPlan             // its counts (bytes aside)
	}{
		{name: "nothing changed", change: func(*testing.T, string) {},
			plan: ReopenPlan{Files: 3, Unchanged: 3}},
		{name: "grown while closed", change: func(t *testing.T, root string) {
			appendFile(t, root, hist, rec("c1", "rollback planned"))
		}, want: map[string]reopenClass{hist: reopenGrown}, plan: ReopenPlan{Files: 3, Unchanged: 2, Grown: 1}},
		{name: "shrunk", change: func(t *testing.T, root string) {
			must(t, os.Truncate(filepath.Join(root, hist), 10))
		}, want: map[string]reopenClass{hist: reopenReread}, plan: ReopenPlan{Files: 3, Unchanged: 2, Reread: 1}},
		{name: "rewritten in place with the same size and mtime", change: func(t *testing.T, root string) {
			p := filepath.Join(root, notes)
			f, err := os.OpenFile(p, os.O_WRONLY, 0) // the same inode
			must(t, err)
			_, err = f.WriteString(strings.ToUpper(base[notes]))
			must(t, err)
			must(t, f.Close())
			must(t, os.Chtimes(p, old, old))
		}, want: map[string]reopenClass{notes: reopenReread}, plan: ReopenPlan{Files: 3, Unchanged: 2, Reread: 1}},
		{name: "only the end rewritten, same size and mtime", change: func(t *testing.T, root string) {
			p := filepath.Join(root, notes)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteAt([]byte("X"), int64(len(base[notes])-3))
			must(t, err)
			must(t, f.Close())
			must(t, os.Chtimes(p, old, old))
		}, want: map[string]reopenClass{notes: reopenReread}, plan: ReopenPlan{Files: 3, Unchanged: 2, Reread: 1}},
		{name: "touched: the same bytes, a new time", change: func(t *testing.T, root string) {
			p := filepath.Join(root, notes)
			later := old.Add(time.Minute)
			must(t, os.Chtimes(p, later, later))
		}, want: map[string]reopenClass{notes: reopenReread}, plan: ReopenPlan{Files: 3, Unchanged: 2, Reread: 1}},
		{name: "replaced by another file with the same name", change: func(t *testing.T, root string) {
			p := filepath.Join(root, notes)
			tmp := p + ".new"
			must(t, os.WriteFile(tmp, []byte(base[notes]), 0o644)) // the same bytes, another inode
			must(t, os.Chtimes(tmp, old, old))
			must(t, os.Rename(tmp, p))
		}, want: map[string]reopenClass{notes: reopenReread}, plan: ReopenPlan{Files: 3, Unchanged: 2, Reread: 1}},
		{name: "grown after its head was rewritten", change: func(t *testing.T, root string) {
			p := filepath.Join(root, hist)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteAt([]byte("2027"), 0)
			must(t, err)
			must(t, f.Close())
			appendFile(t, root, hist, rec("c1", "more"))
		}, want: map[string]reopenClass{hist: reopenReread}, plan: ReopenPlan{Files: 3, Unchanged: 2, Reread: 1}},
		{name: "deleted", change: func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, notes)))
		}, want: map[string]reopenClass{notes: reopenGone}, plan: ReopenPlan{Files: 2, Unchanged: 2, Gone: 1}},
		{name: "an episode added", change: func(t *testing.T, root string) {
			writeFile(t, root, "episode-2/alice/alice.history", rec("c2", "a new episode"))
		}, want: map[string]reopenClass{"episode-2/alice/alice.history": reopenNew}, plan: ReopenPlan{Files: 4, Unchanged: 3, New: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRun(t, base)
			for rel := range base {
				must(t, os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), old, old))
			}
			ix := openTest(t, Options{Root: root})
			if _, err := ix.Refresh(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			table := fileTableOf(ix)
			caches := map[bool]*store.Root{} // a server's reopen, a command's (OneShot): each writes its entry at Close
			for _, oneShot := range []bool{false, true} {
				caches[oneShot] = cacheRoot(t)
				saveIndex(t, ix, Options{Root: root}, caches[oneShot])
			}
			tc.change(t, root)

			got := classifyAll(t, ix, table)
			for rel := range got {
				want, ok := tc.want[rel]
				if !ok {
					want = reopenUnchanged
				}
				if got[rel] != want {
					t.Errorf("%s: %v, want %v", rel, got[rel], want)
				}
			}
			for rel, want := range tc.want {
				if _, ok := got[rel]; !ok {
					t.Errorf("%s: not classified, want %v", rel, want)
				}
			}
			// The reopen from the same state reads what was classified
			// read, and only that: a server's, and a command's (its walk
			// begun at Open beside the restore, its folders planned side
			// by side, one file a part).
			for _, oneShot := range []bool{false, true} {
				back := openTest(t, Options{Root: root, Cache: CacheOptions{Root: caches[oneShot]}, cacheDelay: time.Hour, OneShot: oneShot})
				if oneShot {
					back.planPart = 1
				}
				read := map[string]bool{}
				back.fw.beforeRead = func(rel string) { read[rel] = true }
				if _, err := back.Refresh(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				for rel, c := range got {
					if c != reopenGone && read[rel] != (c != reopenUnchanged) {
						t.Errorf("one-shot %v: %s: classified %v, the reopen read it: %v", oneShot, rel, c, read[rel])
					}
				}
				assertSameAnswers(t, back, Options{Root: root})
			}
			enc, err := store.EncodeFileTable(table)
			must(t, err)
			plan, err := PlanReopen(context.Background(), root, enc)
			must(t, err)
			plan.ReadBytes, plan.KeptBytes = 0, 0
			if plan != tc.plan {
				t.Errorf("plan %+v, want %+v", plan, tc.plan)
			}
		})
	}
}

// classifyAll classifies the run's files now against table.
func classifyAll(t *testing.T, ix *Index, table []store.FileRecord) map[string]reopenClass {
	t.Helper()
	fresh := openTest(t, Options{Root: ix.Root()})
	sc, err := fresh.fw.Scan(fresh.fsys, fresh.root, fresh.workers, scanLog{&fresh.once})
	must(t, err)
	out := map[string]reopenClass{}
	for _, rec := range table {
		cand, ok := sc.Lookup(rec.Path)
		if !ok {
			out[rec.Path] = reopenGone
			continue
		}
		c, _, err := fresh.classifyAtPath(rec, cand)
		must(t, err)
		out[rec.Path] = c
	}
	for _, cands := range sc.Folders() {
		for _, c := range cands {
			if _, ok := out[c.Rel]; !ok {
				out[c.Rel] = reopenNew
			}
		}
	}
	return out
}

// A file whose time is within the racy window of its read may change again
// without its time moving: never taken as unchanged by its stat alone. As
// following does (§7), the reopen checks its head and the bytes before its
// read position, and reads nothing more when they are the same: the list
// says "checked", and the reopen reads only those bytes.
func TestReopenRacyFileIsChecked(t *testing.T) {
	const notes = "episode-1/alice/notes.txt"
	root := writeRun(t, map[string]string{notes: "fresh note\n"})
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := classifyAll(t, ix, fileTableOf(ix))
	if c := got[notes]; c != reopenChecked {
		t.Errorf("a file written just before its read: %v, want checked", c)
	}
	cache := cacheRoot(t)
	saveIndex(t, ix, Options{Root: root}, cache)
	back := openTest(t, Options{Root: root, Cache: CacheOptions{Root: cache}, cacheDelay: time.Hour})
	if _, err := back.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if content, checks := back.BytesRead(); content != 0 || checks == 0 {
		t.Errorf("the reopen read %d bytes of content and %d to check, want none and some", content, checks)
	}
	assertSameAnswers(t, back, Options{Root: root})

	// Rewritten in its head within the window: read again.
	must(t, os.WriteFile(filepath.Join(root, notes), []byte("FRESH note\n"), 0o644))
	info, err := os.Stat(filepath.Join(root, notes))
	must(t, err)
	table := fileTableOf(ix)
	for i := range table {
		table[i].ModTime = info.ModTime().UnixNano() // the same time, as within one tick
	}
	if c := classifyAll(t, ix, table)[notes]; c != reopenReread {
		t.Errorf("rewritten within the racy window: %v, want reread", c)
	}
}

// A file read within the racy window of its time and checked the same at a
// reopen is committed as confirmed, once: the entry keeps the check, and
// the next reopen neither checks it nor writes the entry. Its record used
// to keep the time of its read, so every reopen found it racy, checked it,
// and wrote the entry whole (state, dictionary, statistics: some 117 MB at
// 1 GB, a server's first seconds of page faults and CPU). A file still
// racy (its time ahead of the clock) is checked at each reopen, and a
// check that finds it the same writes nothing either.
func TestReopenConfirmedRacyFileIsNotWrittenAgain(t *testing.T) {
	files := map[string]string{
		"episode-1/bob/bob.log": "2026-10-21 18:00:00.000 INFO [running] [c1] bob started\n" +
			"2026-10-21 18:00:01.000 WARN [running] [c1] bob saw zanzibar\n",
		"episode-1/bob/notes.txt": "a note of quokka\n",
		"episode-1/bob/ahead.txt": "a note of the future\n",
	}
	root := writeRun(t, files)
	for rel := range files {
		at := time.Now().Add(-time.Hour)
		if rel == "episode-1/bob/ahead.txt" {
			at = time.Now().Add(time.Hour)
		}
		must(t, os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), at, at))
	}
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// The entry as a run copied and indexed within the same second leaves
	// it: each file's read within the racy window of its time.
	ix.mu.Lock()
	for _, fs := range ix.state.Files {
		fs.ReadAt = fs.Mtime + int64(time.Second)
	}
	ix.mu.Unlock()
	cacheDir := filepath.Join(t.TempDir(), "cache")
	cache, err := store.OpenRoot(cacheDir)
	must(t, err)
	saveIndex(t, ix, Options{Root: root}, cache)
	manifest := func() []byte {
		t.Helper()
		paths, err := filepath.Glob(filepath.Join(cacheDir, "*", "manifest"))
		must(t, err)
		if len(paths) != 1 {
			t.Fatalf("manifests %v, want one", paths)
		}
		b, err := os.ReadFile(paths[0])
		must(t, err)
		return b
	}
	saved := manifest()

	first, restored := reopened(t, Options{Root: root}, cache)
	if _, checks := first.BytesRead(); !restored || checks == 0 {
		t.Fatalf("the first reopen: restored %v, checked %d bytes, want the racy files checked", restored, checks)
	}
	must(t, first.Close())
	confirmed := manifest()
	if string(confirmed) == string(saved) {
		t.Errorf("the first reopen wrote no entry: its files' checks are not kept")
	}

	read := map[string]bool{}
	second, _ := reopenedWatching(t, Options{Root: root}, cache, func(rel string) { read[rel] = true })
	if content, _ := second.BytesRead(); content != 0 || len(read) != 1 || !read["episode-1/bob/ahead.txt"] {
		t.Errorf("the second reopen read %d bytes of content and checked %v, want none and the file ahead of the clock", content, read)
	}
	assertSameAnswers(t, second, Options{Root: root})
	must(t, second.Close())
	if string(manifest()) != string(confirmed) {
		t.Errorf("the second reopen of an unchanged run wrote its entry again")
	}
}

// reopenedWatching is reopened, with beforeRead told each file the reopen's
// update reads or checks.
func reopenedWatching(t *testing.T, opts Options, root *store.Root, beforeRead func(rel string)) (*Index, bool) {
	t.Helper()
	opts.Cache = CacheOptions{Root: root}
	opts.cacheDelay = time.Hour // written at Close only
	ix := openTest(t, opts)
	ix.fw.beforeRead = beforeRead
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix, ix.cache != nil && ix.cache.Restored() != nil
}

// A reopen that confirms racy files while another file grew commits both:
// the grown file's new lines are found, the answers are a fresh index's,
// and the next reopen finds nothing to write.
func TestReopenConfirmsRacyFilesBesideAGrownOne(t *testing.T) {
	files := map[string]string{
		"episode-1/bob/bob.log":   "2026-10-21 18:00:00.000 INFO [running] [c1] bob started\n",
		"episode-1/bob/notes.txt": "a note of quokka\n",
	}
	root := writeRun(t, files)
	hourAgo := time.Now().Add(-time.Hour)
	for rel := range files {
		must(t, os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), hourAgo, hourAgo))
	}
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix.mu.Lock()
	for _, fs := range ix.state.Files {
		fs.ReadAt = fs.Mtime + int64(time.Second) // read within the racy window
	}
	ix.mu.Unlock()
	cacheDir := filepath.Join(t.TempDir(), "cache")
	cache, err := store.OpenRoot(cacheDir)
	must(t, err)
	saveIndex(t, ix, Options{Root: root}, cache)

	log := filepath.Join(root, "episode-1", "bob", "bob.log")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("2026-10-21 18:00:02.000 WARN [running] [c1] bob saw quagga\n")
	must(t, err)
	must(t, f.Close())
	halfHourAgo := time.Now().Add(-30 * time.Minute)
	must(t, os.Chtimes(log, halfHourAgo, halfHourAgo))

	first, restored := reopened(t, Options{Root: root}, cache)
	if !restored {
		t.Fatal("the entry was not restored")
	}
	res, err := first.Search(context.Background(), Request{Query: "quagga"})
	must(t, err)
	if len(res.Items) != 1 || res.Items[0].File != "episode-1/bob/bob.log" {
		t.Fatalf("quagga after the reopen: %+v, want the grown file's new line", res.Items)
	}
	assertSameAnswers(t, first, Options{Root: root})
	must(t, first.Close())

	read := map[string]bool{}
	second, _ := reopenedWatching(t, Options{Root: root}, cache, func(rel string) { read[rel] = true })
	if len(read) != 0 {
		t.Errorf("the second reopen checked %v, want nothing (every file confirmed or read afresh)", read)
	}
	assertSameAnswers(t, second, Options{Root: root})
	must(t, second.Close())
}
