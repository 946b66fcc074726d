package retriever

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

// oneShotRun is a run indexed once and saved into a cache entry, its files
// older than the racy window.
func oneShotRun(t *testing.T) (root string, opts Options) {
	t.Helper()
	root = writeRun(t, map[string]string{
		"episode-1/alice/alice.history": rec("c1", "deploy the billing service"),
		"episode-1/alice/notes.txt":     "a plain note\n",
		"episode-2/bob/bob.history":     rec("c2", "migration passed"),
		"episode-2/bob/sub/deep.md":     "a deep note\n",
	})
	old := time.Now().Add(-time.Hour)
	must(t, filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cache := cacheRoot(t)
	saveIndex(t, ix, Options{Root: root}, cache)
	return root, Options{Root: root, Cache: CacheOptions{Root: cache}, cacheDelay: time.Hour}
}

// A command's open (OneShot) begins the walk beside the entry's restore,
// and its first update takes that walk as its discovery: the run's folders
// are listed once, before any Refresh, and the update sees what changed
// while the run was closed (a file grown, one added, one removed) as a
// server's reopen does. A server's open walks nothing before its first
// update.
func TestOneShotWalksAtOpen(t *testing.T) {
	const folders = 8 // the root, three episodes, three agents, bob's sub
	for _, oneShot := range []bool{false, true} {
		root, opts := oneShotRun(t)
		appendFile(t, root, "episode-1/alice/alice.history", rec("c1", "rollback planned"))
		writeFile(t, root, "episode-3/carol/carol.history", rec("c3", "a new episode"))
		must(t, os.Remove(filepath.Join(root, "episode-2/bob/sub/deep.md")))

		opts.OneShot = oneShot
		ix := openTest(t, opts)
		ix.refreshMu.Lock() // after the walk begun at Open, if any
		listed := ix.fw.Listings.Load()
		ix.refreshMu.Unlock()
		if want := map[bool]int64{false: 0, true: folders}[oneShot]; listed != want {
			t.Errorf("one-shot %v: %d folders listed by Open, want %d", oneShot, listed, want)
		}
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if got := ix.fw.Listings.Load(); got != folders {
			t.Errorf("one-shot %v: %d folders listed by Open and the first update, want %d (one walk)", oneShot, got, folders)
		}
		if items := search(t, ix, allEvidence("rollback planned")); len(items) == 0 {
			t.Errorf("one-shot %v: the bytes appended while closed are not found", oneShot)
		}
		opts.Cache = CacheOptions{}
		assertSameAnswers(t, ix, opts)
	}
}

// A command closed before any update (its request failed) waits for the
// walk begun at Open before the run folder is closed: the walk, held at
// its first folder, is let go only after Close was called, and Close
// returns after it.
func TestOneShotClosedBeforeAnyUpdate(t *testing.T) {
	_, opts := oneShotRun(t)
	opts.OneShot = true
	hold, let := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts.listed = func(string) {
		once.Do(func() {
			close(hold)
			<-let
		})
	}
	ix, err := Open(context.Background(), opts)
	must(t, err)
	<-hold
	closed := make(chan error)
	go func() { closed <- ix.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the walk begun at Open was under way", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(let)
	must(t, <-closed)
}

// gcPercent reads the collector's GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// A command's reopen (OneShot with BoundMemory) runs no collection from its
// open until its first update has planned its reads: the collector is off
// after Open, stays off when the update reads nothing, and is back on
// before an update reads a file. A first indexing (no entry) collects as
// ever. A GOGC the user set is left alone.
func TestOneShotCollectsNoneUntilPlanned(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the collector is the user's")
	}
	before := gcPercent()
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(before)
		debug.SetMemoryLimit(limit)
	})
	for _, tc := range []struct {
		name                 string
		change               func(t *testing.T, root string)
		noEntry              bool
		afterOpen, afterPlan int
	}{
		{name: "nothing changed", change: func(*testing.T, string) {}, afterOpen: -1, afterPlan: -1},
		{name: "a file grown", change: func(t *testing.T, root string) {
			appendFile(t, root, "episode-1/alice/alice.history", rec("c1", "rollback planned"))
		}, afterOpen: -1, afterPlan: before},
		{name: "a file removed", change: func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "episode-1/alice/notes.txt")))
		}, afterOpen: -1, afterPlan: before},
		{name: "no entry", change: func(*testing.T, string) {}, noEntry: true, afterOpen: before, afterPlan: before},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(before)
			debug.SetMemoryLimit(math.MaxInt64)
			root, opts := oneShotRun(t)
			if tc.noEntry {
				opts.Cache = CacheOptions{Root: cacheRoot(t)}
			}
			tc.change(t, root)
			opts.OneShot, opts.BoundMemory = true, true
			ix := openTest(t, opts)
			if got := gcPercent(); got != tc.afterOpen {
				t.Errorf("after Open: GOGC %d, want %d", got, tc.afterOpen)
			}
			// The workers read side by side, and gcPercent sets GOGC to
			// -1 for an instant: another's read of it then saw -1.
			var readMu sync.Mutex
			ix.fw.beforeRead = func(rel string) {
				readMu.Lock()
				defer readMu.Unlock()
				if got := gcPercent(); got != before {
					t.Errorf("reading %s: GOGC %d, want %d", rel, got, before)
				}
			}
			if _, err := ix.Refresh(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if got := gcPercent(); got != tc.afterPlan {
				t.Errorf("after the first update: GOGC %d, want %d", got, tc.afterPlan)
			}
		})
	}
}
