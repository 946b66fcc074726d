package retriever

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/retriever/internal/runfs"
)

// watchTest runs Watch on ix until the test ends, recording what onChange is
// told; it checks that Watch returns nil and leaves no goroutine behind.
type watchTest struct {
	mu      sync.Mutex
	changed map[string]int // abs path -> calls naming it
}

func startWatch(t *testing.T, ix *Index) *watchTest {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	wt := &watchTest{changed: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() {
		stopped <- ix.Watch(ctx, func(c Changes) {
			wt.mu.Lock()
			for _, f := range c.Files {
				wt.changed[f]++
			}
			wt.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Watch: %v", err)
		}
		goleak.VerifyNone(t, leaks)
	})
	return wt
}

func (wt *watchTest) calls(path string) int {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return wt.changed[path]
}

// hasPiece reports whether the index holds piece, without updating it.
func hasPiece(t *testing.T, ix *Index, piece string) bool {
	return slices.Contains(listPieces(ix, func(string) {}), piece)
}

func TestWatchAppend(t *testing.T) {
	root := writeRun(t, map[string]string{hist: rec("c1", "Alice apple one"), note: "apple one\n"})
	ix := openTest(t, Options{Root: root})
	wt := startWatch(t, ix)
	waitFor(t, "the first update", func() bool { return hasPiece(t, ix, note+":0:0 note apple one") })
	abs := filepath.Join(ix.Root(), filepath.FromSlash(hist))
	calls := wt.calls(abs)

	appendFile(t, root, hist, rec("c1", "Alice apple two"))
	appendFile(t, root, note, "apple two\n")
	// No search: the watcher alone updates the index and tells the subscriber.
	waitFor(t, "the appended record", func() bool {
		return hasPiece(t, ix, "episode-1/a/a.history:1:35 note Alice apple two [c1]")
	})
	waitFor(t, "the appended note", func() bool { return hasPiece(t, ix, note+":1:0 note apple two") })
	waitFor(t, "onChange naming the record file", func() bool { return wt.calls(abs) > calls })

	// A deleted record file is named too.
	must(t, os.Remove(filepath.Join(root, hist)))
	calls = wt.calls(abs)
	waitFor(t, "onChange naming the deleted file", func() bool { return wt.calls(abs) > calls })
	assertFollowed(t, ix, Options{}, []string{note + ":0:0 note apple one", note + ":1:0 note apple two"})
}

func TestWatchNewFolders(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple one\n"})
	ix := openTest(t, Options{Root: root})
	startWatch(t, ix)
	waitFor(t, "the first update", func() bool { return hasPiece(t, ix, note+":0:0 note apple one") })

	// A folder that appears with files already in it (moved in whole).
	writeFile(t, root, "staging/b/deep/b.txt", "apple bee\n")
	must(t, os.Rename(filepath.Join(root, "staging"), filepath.Join(root, "episode-2")))
	waitFor(t, "the moved-in episode's file", func() bool { return hasPiece(t, ix, "episode-2/b/deep/b.txt:0:0 note apple bee") })
	// Folders made one by one, and a file in the newest once it is watched.
	must(t, os.MkdirAll(filepath.Join(root, "episode-3/c/x/y"), 0o755))
	writeFile(t, root, "episode-3/c/x/y/c.txt", "apple sea\n")
	waitFor(t, "the new agent's file", func() bool { return hasPiece(t, ix, "episode-3/c/x/y/c.txt:0:0 note apple sea") })
	waitFor(t, "the new folders watched", func() bool { return ix.fw.IsWatched("episode-3/c/x/y") })
	appendFile(t, root, "episode-3/c/x/y/c.txt", "apple more\n")
	waitFor(t, "an append in the new folder", func() bool { return hasPiece(t, ix, "episode-3/c/x/y/c.txt:1:0 note apple more") })

	// A folder replaced by a file.
	must(t, os.RemoveAll(filepath.Join(root, "episode-3/c/x")))
	writeFile(t, root, "episode-3/c/x", "apple file\n")
	waitFor(t, "the file that replaced a folder", func() bool { return hasPiece(t, ix, "episode-3/c/x:0:0 note apple file") })
	assertFollowed(t, ix, Options{}, []string{note + ":0:0 note apple one", "episode-2/b/deep/b.txt:0:0 note apple bee",
		"episode-3/c/x:0:0 note apple file"})
}

// TestWatchFallsBackToPolling: folders that cannot be watched are polled, and
// that is logged once.
func TestWatchFallsBackToPolling(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(ix *Index)
	}{
		{"watch limit reached", func(ix *Index) {
			ix.fw.addWatch = func(w *fsnotify.Watcher, path string) error {
				if filepath.Base(path) == "a" || filepath.Base(filepath.Dir(path)) == "episode-2" {
					return syscall.ENOSPC
				}
				return w.Add(path)
			}
		}},
		{"no file-system events", func(ix *Index) {
			ix.fw.newWatcher = func() (*fsnotify.Watcher, error) { return nil, errors.New("too many open files") }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeRun(t, map[string]string{note: "apple one\n"})
			core, logs := observer.New(zap.WarnLevel)
			ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
			c.setup(ix)
			startWatch(t, ix)
			waitFor(t, "the first update", func() bool { return hasPiece(t, ix, note+":0:0 note apple one") })
			appendFile(t, root, note, "apple two\n")
			waitFor(t, "the append, polled", func() bool { return hasPiece(t, ix, note+":1:0 note apple two") })
			writeFile(t, root, "episode-2/b/b.txt", "apple bee\n")
			waitFor(t, "a new folder's file, polled", func() bool { return hasPiece(t, ix, "episode-2/b/b.txt:0:0 note apple bee") })
			appendFile(t, root, "episode-2/b/b.txt", "apple more\n")
			waitFor(t, "an append in the new folder, polled", func() bool { return hasPiece(t, ix, "episode-2/b/b.txt:1:0 note apple more") })
			if n := logs.FilterMessageSnippet("polling").Len(); n != 1 || logs.Len() != 1 {
				t.Fatalf("want one WARN about polling, got %v", logs.All())
			}
		})
	}
}

// TestWatchOnce: a second Watch on the same index is refused.
func TestWatchOnce(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple one\n"})
	ix := openTest(t, Options{Root: root})
	startWatch(t, ix)
	waitFor(t, "the first update", func() bool { return hasPiece(t, ix, note+":0:0 note apple one") })
	if err := ix.Watch(context.Background(), nil); err == nil {
		t.Fatal("a second Watch ran")
	}
}

func TestWatcherRel(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple\n"})
	ix := openTest(t, Options{Root: root})
	wt := &watcher{ix: ix}
	r := ix.Root()
	for _, c := range []struct {
		name, rel string
		ok        bool
	}{
		{r, ".", true},
		{runfs.Abs(ix.root, "."), ".", true},
		{r + "/episode-1", "episode-1", true},
		{r + "/./episode-1/a", "episode-1/a", true},
		{runfs.Abs(ix.root, "episode-1/a"), "episode-1/a", true},
		{r + "x/episode-1", "", false},
		{"/elsewhere", "", false},
	} {
		if rel, ok := wt.rel(c.name); rel != c.rel || ok != c.ok {
			t.Errorf("rel(%q) = %q, %v; want %q, %v", c.name, rel, ok, c.rel, c.ok)
		}
	}
}

// watchedRun writes files, opens an index on them, starts a watcher and
// waits until the watcher's events alone keep the index current.
func watchedRun(t *testing.T, files map[string]string, opts Options) (*Index, string) {
	t.Helper()
	root := writeRun(t, files)
	opts.Root = root
	ix := openTest(t, opts)
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	startWatch(t, ix)
	n, _, _, _ := ix.fw.Counts()
	waitWatched(t, ix, n)
	return ix, root
}

// cost returns the folders listed and the stats given by the updates while
// fn ran.
func cost(ix *Index, fn func()) (listings, stats int64) {
	l, s := ix.fw.Listings.Load(), ix.fw.Stats.Load()
	fn()
	return ix.fw.Listings.Load() - l, ix.fw.Stats.Load() - s
}

// found reports whether a search for word returns a piece of rel holding it.
func found(t *testing.T, ix *Index, word, rel string) bool {
	t.Helper()
	for _, it := range search(t, ix, allEvidence(word)) {
		if it.File == rel && strings.Contains(it.Text, word) {
			return true
		}
	}
	return false
}

// TestWatchFreshAppends (issue 13): 200 times in a row, a line with a new
// word is appended to another file and searched for at once: it is found
// every time, and the searches list no folder and give a stat only to the
// files appended to (a walk would give every file one at each search).
func TestWatchFreshAppends(t *testing.T) {
	const agents, perAgent = 20, 10
	files := map[string]string{}
	var rels []string
	for a := range agents {
		for f := range perAgent {
			rel := fmt.Sprintf("episode-%d/agent%d/notes-%d.md", 1+a%3, a, f)
			if f%3 == 1 {
				rel = fmt.Sprintf("episode-%d/agent%d/agent%d.history", 1+a%3, a, f)
				files[rel] = rec("c1", "Agent old record")
			} else {
				files[rel] = "an old note\n"
			}
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	ix, root := watchedRun(t, files, Options{})
	var listings, stats int64
	for i := range 200 {
		rel := rels[i*len(rels)/200]
		word := fmt.Sprintf("fresh%dword", i)
		l, s := cost(ix, func() {
			line := "noted " + word + "\n"
			if strings.HasSuffix(rel, ".history") {
				line = rec("c1", "Agent noted "+word)
			}
			appendFile(t, root, rel, line)
			if !found(t, ix, word, rel) {
				t.Fatalf("append %d: %q appended to %s was not found by the search right after", i, word, rel)
			}
		})
		listings += l
		stats += s
	}
	// Each append is one event, one file to look at; the watcher's own
	// updates may take some of them before the search does.
	if listings != 0 || stats > 200 {
		t.Fatalf("200 searches after an append each listed %d folders and gave %d stats; want 0 and at most 200 (%d files)", listings, stats, len(rels))
	}
}

// TestWatchChangesSearchedAtOnce: every kind of change is seen by the search
// made right after it, and the index then equals one built from scratch.
func TestWatchChangesSearchedAtOnce(t *testing.T) {
	base := map[string]string{
		note:                    "apple one\n",
		hist:                    rec("c1", "Alice apple record"),
		"episode-1/a/sub/x.txt": "apple sub\n",
		"episode-1/b/b.txt":     "apple bee\n",
		"episode-2/c/c.txt":     "apple sea\n",
	}
	ep1 := []string{"episode-1/a/sub/x.txt:0:0 note apple sub", "episode-1/b/b.txt:0:0 note apple bee", "episode-2/c/c.txt:0:0 note apple sea"}
	all := append([]string{note + ":0:0 note apple one", fmt.Sprintf("%s:0:%d note Alice apple record [c1]", hist, recCol)}, ep1...)
	without := func(pieces []string, drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(pieces), func(p string) bool { return slices.Contains(drop, p) })
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, root string)
		want   []string
	}{
		{"append", func(t *testing.T, root string) { appendFile(t, root, note, "apple two\n") },
			append(slices.Clone(all), note+":1:0 note apple two")},
		{"replaced: another file renamed over it", func(t *testing.T, root string) {
			writeFile(t, root, "episode-1/a/new.tmp", "pear new\n")
			must(t, os.Rename(filepath.Join(root, "episode-1/a/new.tmp"), filepath.Join(root, note)))
		}, append(without(all, note+":0:0 note apple one"), note+":0:0 note pear new")},
		{"truncated and written again", func(t *testing.T, root string) { writeFile(t, root, note, "pear\n") },
			append(without(all, note+":0:0 note apple one"), note+":0:0 note pear")},
		{"truncated to nothing", func(t *testing.T, root string) { must(t, os.Truncate(filepath.Join(root, note), 0)) },
			without(all, note+":0:0 note apple one")},
		{"rewritten in place, same size and time", func(t *testing.T, root string) {
			p := filepath.Join(root, note)
			st, err := os.Stat(p)
			must(t, err)
			writeFile(t, root, note, "pearr one\n")
			must(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}, append(without(all, note+":0:0 note apple one"), note+":0:0 note pearr one")},
		{"deleted", func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, hist))) },
			without(all, fmt.Sprintf("%s:0:%d note Alice apple record [c1]", hist, recCol))},
		{"a new episode folder", func(t *testing.T, root string) { writeFile(t, root, "episode-3/d/deep/d.txt", "apple dee\n") },
			append(slices.Clone(all), "episode-3/d/deep/d.txt:0:0 note apple dee")},
		{"a new agent folder", func(t *testing.T, root string) { writeFile(t, root, "episode-2/e/e.txt", "apple e\n") },
			append(slices.Clone(all), "episode-2/e/e.txt:0:0 note apple e")},
		{"a folder moved in whole", func(t *testing.T, root string) {
			writeFile(t, root, "staging/f/g/f.txt", "apple f\n")
			must(t, os.Rename(filepath.Join(root, "staging"), filepath.Join(root, "episode-4")))
		}, append(slices.Clone(all), "episode-4/f/g/f.txt:0:0 note apple f")},
		{"a folder moved within the run", func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "episode-1/a/sub"), filepath.Join(root, "episode-2/c/moved")))
		}, append(without(all, "episode-1/a/sub/x.txt:0:0 note apple sub"), "episode-2/c/moved/x.txt:0:0 note apple sub")},
		{"a folder replaced by another", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "episode-1/b")))
			writeFile(t, root, "episode-1/b/b2.txt", "apple bee two\n")
		}, append(without(all, "episode-1/b/b.txt:0:0 note apple bee"), "episode-1/b/b2.txt:0:0 note apple bee two")},
		{"a folder replaced by a file", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "episode-1/a/sub")))
			writeFile(t, root, "episode-1/a/sub", "apple file\n")
		}, append(without(all, "episode-1/a/sub/x.txt:0:0 note apple sub"), "episode-1/a/sub:0:0 note apple file")},
		{"an episode deleted", func(t *testing.T, root string) { must(t, os.RemoveAll(filepath.Join(root, "episode-2"))) },
			without(all, "episode-2/c/c.txt:0:0 note apple sea")},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix, root := watchedRun(t, base, Options{})
			assertFollowed(t, ix, Options{}, all)
			c.change(t, root)
			assertFollowed(t, ix, Options{}, c.want)
		})
	}
}

// TestWatchRacyRewrite: a file rewritten with the same size and time as when
// it was last read, long after (so its time is no longer racy), is seen by
// the event alone: polling would trust its time.
func TestWatchRacyRewrite(t *testing.T) {
	ix, root := watchedRun(t, map[string]string{note: "apple one\n"}, Options{})
	p := filepath.Join(root, note)
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(p, old, old))
	assertFollowed(t, ix, Options{}, []string{note + ":0:0 note apple one"})
	writeFile(t, root, note, "pearr one\n")
	must(t, os.Chtimes(p, old, old))
	if !found(t, ix, "pearr", note) {
		t.Fatal("a same-size rewrite with the old time was not seen")
	}
	assertFollowed(t, ix, Options{}, []string{note + ":0:0 note pearr one"})
}

// TestWatchSomeFoldersUnwatched (issue 13): with the inotify watch limit
// reached for some folders, those are polled, so a change in them is seen at
// once; the rest still costs no stat.
func TestWatchSomeFoldersUnwatched(t *testing.T) {
	files := map[string]string{"episode-2/b/b.txt": "apple bee\n", "episode-2/b/c.txt": "apple sea\n"}
	for i := range 50 {
		files[fmt.Sprintf("episode-1/a/n%d.txt", i)] = "apple note\n"
	}
	root := writeRun(t, files)
	core, logs := observer.New(zap.WarnLevel)
	ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix.fw.addWatch = func(w *fsnotify.Watcher, path string) error {
		if strings.HasSuffix(path, "episode-2") || strings.HasSuffix(path, "episode-2/b") {
			return syscall.ENOSPC
		}
		return w.Add(path)
	}
	// Which folders updates list, the searches' and the watcher's own (its
	// polls, and its update after a watched file's event, which under load
	// falls in a search's window): only the polled ones may be.
	var listedMu sync.Mutex
	var listed []string
	ix.fw.Listed = func(rel string) {
		listedMu.Lock()
		defer listedMu.Unlock()
		listed = append(listed, rel)
	}
	startWatch(t, ix)
	waitFor(t, "the folders watched", func() bool {
		_, watched, polled, bar := ix.fw.Counts()
		return watched == 3 && polled == 2 && bar
	})
	// The watcher's first update sets those as it goes, and then gives
	// every file of the folders it began to watch a stat: let it end before
	// the first search is measured.
	ix.refreshMu.Lock()
	ix.refreshMu.Unlock()
	for i := range 20 {
		rel := "episode-2/b/b.txt"
		if i%2 == 1 {
			rel = fmt.Sprintf("episode-1/a/n%d.txt", i)
		}
		word := fmt.Sprintf("fresh%dword", i)
		listedMu.Lock()
		listed = listed[:0]
		listedMu.Unlock()
		listings, stats := cost(ix, func() {
			appendFile(t, root, rel, word+"\n")
			if !found(t, ix, word, rel) {
				t.Fatalf("%q appended to %s was not found by the search right after", word, rel)
			}
		})
		// The two polled folders: their stats, a listing of each when its
		// time is racy, their two files; one more for a watched file. That
		// once for the search, and again for an update of the watcher's in
		// the same window; a walk would list the watched folders and stat
		// the 50 files of episode-1/a.
		listedMu.Lock()
		for _, rel := range listed {
			if rel != "episode-2" && rel != "episode-2/b" {
				t.Fatalf("a search after an append listed %s, a watched folder (%d listings, %d stats)", rel, listings, stats)
			}
		}
		listedMu.Unlock()
		if stats > 2*(2*(1+2)+1) {
			t.Fatalf("a search after an append (%d) gave %d stats (%d listings); want the polled folders' only", i, stats, listings)
		}
	}
	writeFile(t, root, "episode-2/b/new.txt", "apple new\n")
	if !found(t, ix, "new", "episode-2/b/new.txt") {
		t.Fatal("a new file in a polled folder was not found at once")
	}
	if n := logs.FilterMessageSnippet("polling").Len(); n != 1 {
		t.Fatalf("want one WARN about polling, got %v", logs.All())
	}
}

// TestWatchEventsLost: when the kernel's queue overflows, the next search
// walks the run folder, and finds what changed without an event.
func TestWatchEventsLost(t *testing.T) {
	var w *fsnotify.Watcher
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/b/b.txt": "apple bee\n"})
	ix := openTest(t, Options{Root: root})
	ix.fw.newWatcher = func() (*fsnotify.Watcher, error) {
		var err error
		w, err = fsnotify.NewBufferedWatcher(16)
		return w, err
	}
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	startWatch(t, ix)
	waitWatched(t, ix, 4)
	// Lose the events of episode-1/b: its watch goes, but the index still
	// trusts it, as when the kernel drops events.
	must(t, w.Remove(filepath.Join(ix.Root(), "episode-1", "b")))
	appendFile(t, root, "episode-1/b/b.txt", "lost word\n")
	if found(t, ix, "lost", "episode-1/b/b.txt") {
		t.Fatal("the test's lost event was not lost")
	}
	w.Errors <- fsnotify.ErrEventOverflow
	// The loop takes the error before the barrier's event (as the kernel
	// queues an overflow before what follows it): once the barrier came
	// back, the overflow is recorded. A real overflow's lost changes also
	// queued events on the change probe, which this test's loss (a watch
	// removed from the watcher alone, its event drained by the search
	// above) does not stand for.
	if err := ix.fw.awaitEvents(context.Background(), ix.log); err != nil {
		t.Fatal(err)
	}
	listings, _ := cost(ix, func() {
		if !found(t, ix, "lost", "episode-1/b/b.txt") {
			t.Fatal("after an overflow, a change without an event was not found")
		}
	})
	if listings == 0 {
		t.Fatal("after an overflow, the search did not walk the run folder")
	}
	assertFollowed(t, ix, Options{}, nil)
}

// TestWatchStops: when the watcher stops, searches walk the run folder.
func TestWatchStops(t *testing.T) {
	var w *fsnotify.Watcher
	core, logs := observer.New(zap.WarnLevel)
	root := writeRun(t, map[string]string{note: "apple one\n"})
	ix := openTest(t, Options{Root: root, Logger: zap.New(core)})
	ix.fw.newWatcher = func() (*fsnotify.Watcher, error) {
		var err error
		w, err = fsnotify.NewWatcher()
		return w, err
	}
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	startWatch(t, ix)
	waitWatched(t, ix, 3)
	must(t, w.Close())
	waitFor(t, "the WARN", func() bool { return logs.FilterMessageSnippet("stopped").Len() == 1 })
	for i := range 3 {
		word := fmt.Sprintf("after%dstop", i)
		appendFile(t, root, note, word+"\n")
		if !found(t, ix, word, note) {
			t.Fatalf("after the watcher stopped, %q was not found", word)
		}
	}
}

// TestWatchHardLink: a file with another link outside the run is written
// through that path, whose events go elsewhere; it is polled.
func TestWatchHardLink(t *testing.T) {
	ix, outside := hardLinkedRun(t)
	appendFile(t, filepath.Dir(outside), filepath.Base(outside), "linked word\n")
	if !found(t, ix, "linked", note) {
		t.Fatal("a write through a hard link outside the run was not seen")
	}
}

// hardLinkedRun is a watched run whose note is a hard link of a file
// outside it (returned), every folder watched.
func hardLinkedRun(t *testing.T) (*Index, string) {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	must(t, os.WriteFile(outside, []byte("apple one\n"), 0o644))
	root := writeRun(t, map[string]string{"episode-1/b/b.txt": "apple bee\n"})
	must(t, os.MkdirAll(filepath.Join(root, "episode-1/a"), 0o755))
	if err := os.Link(outside, filepath.Join(root, note)); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	startWatch(t, ix)
	waitWatched(t, ix, 4)
	return ix, outside
}

// TestWatchRequestsCostNoWalk (issue 13): with a healthy watcher and nothing
// changed, searches, workspace symbols, run/info, diagnostics, run/records,
// documentSymbol, foldingRange and hover list no folder and give no stat.
func TestWatchRequestsCostNoWalk(t *testing.T) {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("episode-%d/a%d/a.history", 1+i%4, i)] = rec("c1", "Alice apple") + "2026-10-21 18:00:00 [running] old style line\n"
	}
	ix, _ := watchedRun(t, files, Options{})
	ctx := context.Background()
	listings, stats := cost(ix, func() {
		for range 5 {
			search(t, ix, Request{Query: "apple", Episode: "episode-1", Conversation: "c1"})
			if _, err := ix.Symbols(ctx, "apple", 0); err != nil {
				t.Fatal(err)
			}
			if _, err := ix.Info(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range ix.RecordFiles() {
				ix.Diagnostics(p, 0)
				if _, err := ix.Outline(ctx, p, 0); err != nil {
					t.Fatal(err)
				}
				ix.Folds(p)
				if _, err := ix.RecordAt(ctx, p, 0, Request{Query: "apple"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ix.Records(ctx, RecordsRequest{Episode: "episode-1", Conversation: "c1"}); err != nil {
				t.Fatal(err)
			}
		}
	})
	if listings != 0 || stats != 0 {
		t.Fatalf("requests with nothing changed listed %d folders and gave %d stats", listings, stats)
	}
}

// TestWatchRecordRequestsSeeAppendAtOnce (issues 13, 14, 19): with a healthy
// watcher, run/records, documentSymbol (Outline) and hover (RecordAt) sent
// right after a record is appended see it, every time, at no walk.
func TestWatchRecordRequestsSeeAppendAtOnce(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("episode-1/a%d/a.history", i)] = rec("c1", "Alice apple")
	}
	ix, root := watchedRun(t, files, Options{})
	ctx := context.Background()
	listings, _ := cost(ix, func() {
		for i := range 40 {
			rel := fmt.Sprintf("episode-1/a%d/a.history", i%20)
			word := fmt.Sprintf("fresh%dword", i)
			appendFile(t, root, rel, "2026-10-21 18:00:01 [st"+word+"] [c1] Alice "+word+"\n")
			line := 1 + i/20
			path := filepath.Join(ix.Root(), filepath.FromSlash(rel))

			outline := func() {
				o, err := ix.Outline(ctx, path, 0)
				must(t, err)
				var names []string
				for _, run := range o.Runs {
					for _, r := range run.Records {
						names = append(names, r.Name)
					}
				}
				if len(names) != line+1 || !strings.HasSuffix(names[line], word) {
					t.Fatalf("append %d: the outline right after is %q; want %d records, the last ending in %q", i, names, line+1, word)
				}
			}
			hover := func() {
				facts, err := ix.RecordAt(ctx, path, line, Request{Query: "x"})
				must(t, err)
				if facts == nil || facts.State != "st"+word {
					t.Fatalf("append %d: the hover of line %d right after is %+v; want state st%s", i, line, facts, word)
				}
			}
			records := func() {
				res, err := ix.Records(ctx, RecordsRequest{Episode: "episode-1", Conversation: "c1", Limit: 1000})
				must(t, err)
				if !slices.ContainsFunc(res.Records, func(r Record) bool { return strings.Contains(r.Text, word) }) {
					t.Fatalf("append %d: run/records right after does not list %q", i, word)
				}
			}
			// Each in turn is the one asked right after the append, so each
			// sees it by its own update.
			asks := []func(){outline, hover, records}
			for k := range asks {
				asks[(i+k)%len(asks)]()
			}
		}
	})
	// Each update reads the one file appended to, with its stats; no folder
	// is listed.
	if listings != 0 {
		t.Fatalf("40 appends, each followed by records, outline and hover, listed %d folders; want 0", listings)
	}
}
