package retriever

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
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
	waitFor(t, "the new folders watched", func() bool {
		ix.fw.mu.Lock()
		defer ix.fw.mu.Unlock()
		_, ok := ix.fw.watched["episode-3/c/x/y"]
		return ok
	})
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
		{ix.abs("."), ".", true},
		{r + "/episode-1", "episode-1", true},
		{r + "/./episode-1/a", "episode-1/a", true},
		{ix.abs("episode-1/a"), "episode-1/a", true},
		{r + "x/episode-1", "", false},
		{"/elsewhere", "", false},
	} {
		if rel, ok := wt.rel(c.name); rel != c.rel || ok != c.ok {
			t.Errorf("rel(%q) = %q, %v; want %q, %v", c.name, rel, ok, c.rel, c.ok)
		}
	}
}
