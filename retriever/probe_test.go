package retriever

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"runls/retriever/internal/runfs"
)

// probeRun is a watched run of a few agent folders, with the change probe
// in use (skipped where there is none).
func probeRun(t *testing.T, opts Options) (*Index, string) {
	t.Helper()
	if p, err := runfs.NewProbe(); err != nil {
		t.Skipf("no change probe here: %v", err)
	} else {
		p.Close()
	}
	files := map[string]string{hist: rec("c1", "Alice apple record")}
	for a := range 4 {
		for f := range 3 {
			files[fmt.Sprintf("episode-%d/agent%d/n%d.txt", 1+a%2, a, f)] = "apple old note\n"
		}
	}
	return watchedRun(t, files, opts)
}

// hasWord reports whether a search for word (a complete one: every file
// evidence) returns a piece of rel holding it; it fails the test (from any
// goroutine) on an error.
func hasWord(t *testing.T, ix *Index, word, rel string) bool {
	res, err := ix.Search(context.Background(), allEvidence(word))
	if err != nil {
		t.Errorf("search %q: %v", word, err)
		return false
	}
	for _, it := range res.Items {
		if it.File == rel && strings.Contains(it.Text, word) {
			return true
		}
	}
	return false
}

// quietAnswer reports whether a search for word was answered without the
// barrier (the fast path), and finds what it should.
func quietAnswer(t *testing.T, ix *Index, word, rel string, want bool) bool {
	t.Helper()
	before := ix.fw.quietAnswers.Load()
	if got := hasWord(t, ix, word, rel); got != want {
		t.Fatalf("search %q in %s: found %v, want %v", word, rel, got, want)
	}
	return ix.fw.quietAnswers.Load() > before
}

// awaitQuiet searches until a search is answered without the barrier: the
// watcher's own update after a change may be under way for a moment.
func awaitQuiet(t *testing.T, ix *Index, word, rel string, want bool) {
	t.Helper()
	waitFor(t, "a search answered without the barrier", func() bool { return quietAnswer(t, ix, word, rel, want) })
}

// probeChanges are the kinds of change a search must see at once: each
// makes (or deletes) a file holding word, under a name of its own (i), and
// tells the file and whether the word is then in the run.
var probeChanges = []struct {
	name   string
	change func(t testing.TB, root, word string, i int) (rel string, present bool)
}{
	{"append", func(t testing.TB, root, word string, i int) (string, bool) {
		a := i % 4
		rel := fmt.Sprintf("episode-%d/agent%d/n%d.txt", 1+a%2, a, i%3)
		appendFile(t, root, rel, "noted "+word+"\n")
		return rel, true
	}},
	{"new file", func(t testing.TB, root, word string, i int) (string, bool) {
		rel := fmt.Sprintf("episode-1/agent0/new%d.txt", i)
		writeFile(t, root, rel, "made "+word+"\n")
		return rel, true
	}},
	{"new folder with a file", func(t testing.TB, root, word string, i int) (string, bool) {
		rel := fmt.Sprintf("episode-2/agent1/dir%d/f.txt", i)
		writeFile(t, root, rel, "made "+word+"\n")
		return rel, true
	}},
	{"renamed in", func(t testing.TB, root, word string, i int) (string, bool) {
		rel := fmt.Sprintf("episode-1/agent2/moved%d.txt", i)
		out := filepath.Join(filepath.Dir(root), filepath.Base(root)+fmt.Sprintf("-out%d.txt", i))
		must(t, os.WriteFile(out, []byte("moved "+word+"\n"), 0o644))
		must(t, os.Rename(out, filepath.Join(root, filepath.FromSlash(rel))))
		return rel, true
	}},
	{"deleted", func(t testing.TB, root, word string, i int) (string, bool) {
		rel := fmt.Sprintf("episode-2/agent3/gone%d.txt", i)
		return rel, false // made and searched for first by the caller, then deleted
	}},
}

// TestProbeQuietSearchesSkipTheBarrier: with nothing changed, searches are
// answered without the barrier and no update runs; after each kind of
// change, the search made at once takes the barrier's way and sees it, and
// the searches after it are quiet again.
func TestProbeQuietSearchesSkipTheBarrier(t *testing.T) {
	ix, root := probeRun(t, Options{})
	awaitQuiet(t, ix, "apple", hist, true)
	listings, stats := cost(ix, func() {
		for range 20 {
			if !quietAnswer(t, ix, "apple", hist, true) {
				t.Fatal("a search with nothing changed took the barrier's way")
			}
		}
	})
	if listings != 0 || stats != 0 {
		t.Fatalf("quiet searches listed %d folders and gave %d stats", listings, stats)
	}
	for i, c := range probeChanges {
		word := fmt.Sprintf("probe%dword", i)
		rel, present := c.change(t, root, word, i)
		if !present {
			writeFile(t, root, rel, "doomed "+word+"\n")
			if quietAnswer(t, ix, word, rel, true) {
				t.Fatalf("%s: the search after a new file was answered without the barrier", c.name)
			}
			must(t, os.Remove(filepath.Join(root, filepath.FromSlash(rel))))
		}
		if quietAnswer(t, ix, word, rel, present) {
			t.Fatalf("%s: the search after the change was answered without the barrier", c.name)
		}
		awaitQuiet(t, ix, word, rel, present)
	}
}

// TestProbeStress: many times in a row, three goroutines each change the
// run (an append of a fresh word, a new file, a new folder with a file, a
// file renamed in, a file deleted) and search at once, while a fourth
// searches without pause (its slow passes drain the events of the others'
// changes, and its quiet ones race with them); every answer holds every
// change made before its search. Run with -race.
func TestProbeStress(t *testing.T) {
	ix, root := probeRun(t, Options{})
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	before := ix.fw.quietAnswers.Load()
	stop := make(chan struct{})
	var quiet sync.WaitGroup
	quiet.Add(1)
	go func() {
		defer quiet.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if !hasWord(t, ix, "apple", hist) {
				t.Error("a search for a word that never changed missed it")
				return
			}
		}
	}()
	var changers sync.WaitGroup
	for g := range 3 {
		changers.Add(1)
		go func() {
			defer changers.Done()
			for r := range rounds {
				i := 1000*(g+1) + r
				c := probeChanges[(r+g)%len(probeChanges)]
				word := fmt.Sprintf("stress%dword", i)
				rel, present := c.change(t, root, word, i)
				if !present {
					writeFile(t, root, rel, "doomed "+word+"\n")
					if !hasWord(t, ix, word, rel) {
						t.Errorf("round %d of goroutine %d: a new file's %q was missed by the search right after", r, g, word)
						return
					}
					must(t, os.Remove(filepath.Join(root, filepath.FromSlash(rel))))
				}
				if got := hasWord(t, ix, word, rel); got != present {
					t.Errorf("round %d of goroutine %d, %s: the search right after found %q in %s: %v, want %v", r, g, c.name, word, rel, got, present)
					return
				}
			}
		}()
	}
	changers.Wait()
	close(stop)
	quiet.Wait()
	if ix.fw.quietAnswers.Load() == before {
		t.Log("no search of the stress was answered without the barrier")
	}
	assertFollowed(t, ix, Options{}, nil)
}

// TestProbeNeverWhenPolled: a folder that cannot be watched (a network
// file system, which runfs.Unwatchable tells, or a failed watch) is
// polled, and a file with another link too: no search skips the barrier
// and the update then, and each sees a change made there at once. Once
// nothing is polled, searches skip it again.
func TestProbeNeverWhenPolled(t *testing.T) {
	t.Run("unwatched folder", func(t *testing.T) {
		var unwatchable atomic.Bool
		unwatchable.Store(true)
		ix, root := hookedRun(t, func(path string) error {
			if unwatchable.Load() && strings.HasSuffix(path, "episode-2/b") {
				return errors.New("a network file system")
			}
			return nil
		})
		waitFor(t, "the folders watched", func() bool {
			_, watched, polled, bar := ix.fw.Counts()
			return watched == 4 && polled == 1 && bar
		})
		for i := range 20 {
			word := fmt.Sprintf("polled%dword", i)
			appendFile(t, root, "episode-2/b/b.txt", word+"\n")
			if quietAnswer(t, ix, word, "episode-2/b/b.txt", true) || quietAnswer(t, ix, "apple", note, true) {
				t.Fatal("a search skipped the barrier while a folder is polled")
			}
		}
		unwatchable.Store(false)
		awaitQuiet(t, ix, "apple", note, true)
	})
	t.Run("hard link", func(t *testing.T) {
		ix, outside := hardLinkedRun(t)
		for i := range 20 {
			word := fmt.Sprintf("linked%dword", i)
			appendFile(t, filepath.Dir(outside), filepath.Base(outside), word+"\n")
			if quietAnswer(t, ix, word, note, true) || quietAnswer(t, ix, "bee", "episode-1/b/b.txt", true) {
				t.Fatal("a search skipped the barrier while a file is polled")
			}
		}
		must(t, os.Remove(outside))
		awaitQuiet(t, ix, "linked0word", note, true)
	})
}

// TestProbeRefusedForTheWatcher: when the watcher's watch of a folder hits
// the per-user watch limit while the probe holds watches, the probe gives
// its watches back (the watcher's come first): the folder is watched, not
// polled, and no search skips the barrier.
func TestProbeRefusedForTheWatcher(t *testing.T) {
	var refused atomic.Bool
	ix, root := hookedRun(t, func(path string) error {
		if strings.HasSuffix(path, "episode-2/b") && refused.CompareAndSwap(false, true) {
			return syscall.ENOSPC
		}
		return nil
	})
	waitWatched(t, ix, 5)
	for i := range 10 {
		word := fmt.Sprintf("after%dword", i)
		appendFile(t, root, "episode-2/b/b.txt", word+"\n")
		if !hasWord(t, ix, word, "episode-2/b/b.txt") {
			t.Fatalf("%q was missed", word)
		}
		if quietAnswer(t, ix, "apple", note, true) {
			t.Fatal("a search skipped the barrier with the probe refused")
		}
	}
}

// TestProbeNotWhileUpdating: an update under way holds a change set taken
// (here a walk after the index was forgotten, as when its cache entry is
// dropped): a search made meanwhile waits for it, rather than answer from
// the state it is rebuilding, though the probe got no event.
func TestProbeNotWhileUpdating(t *testing.T) {
	var hold sync.Mutex // held: an update's reads wait
	var held atomic.Bool
	reading := make(chan struct{}, 1)
	ix, _ := probeRun(t, Options{})
	awaitQuiet(t, ix, "apple", hist, true)
	ix.refreshMu.Lock()
	ix.fw.beforeRead = func(string) {
		if held.Load() {
			select {
			case reading <- struct{}{}:
			default:
			}
			hold.Lock()
			hold.Unlock()
		}
	}
	hold.Lock()
	held.Store(true)
	ix.cacheHost().Forget() // under the update lock, as a dropped entry is
	ix.refreshMu.Unlock()
	updated := make(chan error, 1)
	go func() {
		_, err := ix.update(context.Background(), nil)
		updated <- err
	}()
	<-reading // the walk took the change set and reads the run again
	searched := make(chan bool, 1)
	go func() { searched <- hasWord(t, ix, "apple", hist) }()
	time.Sleep(20 * time.Millisecond)
	held.Store(false)
	hold.Unlock()
	if !<-searched {
		t.Fatal("a search made while the run was indexed afresh answered from the part indexed")
	}
	must(t, <-updated)
}

// hookedRun is a watched run of two episodes whose watcher asks fail
// first about each folder's watch: an error stands for the watch's.
func hookedRun(t *testing.T, fail func(path string) error) (*Index, string) {
	t.Helper()
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-2/b/b.txt": "apple bee\n"})
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix.fw.addWatch = func(w *fsnotify.Watcher, path string) error {
		if err := fail(path); err != nil {
			return err
		}
		return w.Add(path)
	}
	startWatch(t, ix)
	return ix, root
}

// TestProbeQuietRecordRequests: documentSymbol and hover (Outline,
// RecordAt) skip the barrier when nothing changed, and see an append made
// right before them.
func TestProbeQuietRecordRequests(t *testing.T) {
	ix, root := probeRun(t, Options{})
	ctx := context.Background()
	path := filepath.Join(ix.Root(), filepath.FromSlash(hist))
	outline := func(want int) bool {
		t.Helper()
		before := ix.fw.quietAnswers.Load()
		o, err := ix.Outline(ctx, path, 0)
		must(t, err)
		n := 0
		for _, run := range o.Runs {
			n += len(run.Records)
		}
		if n != want {
			t.Fatalf("the outline holds %d records, want %d", n, want)
		}
		return ix.fw.quietAnswers.Load() > before
	}
	waitFor(t, "an outline made without the barrier", func() bool { return outline(1) })
	for i := range 5 {
		appendFile(t, root, hist, rec("c1", fmt.Sprintf("Alice record %d", i)))
		if outline(2 + i) {
			t.Fatal("the outline right after an append skipped the barrier")
		}
		facts, err := ix.RecordAt(ctx, path, 1+i, Request{Query: "x"})
		must(t, err)
		if facts == nil {
			t.Fatalf("no record at line %d", 1+i)
		}
		waitFor(t, "an outline made without the barrier", func() bool { return outline(2 + i) })
	}
}

// TestProbeQuietAnswerAfterForget: a cache entry dropped between Quiet's
// yes and the answer (its Forget empties the state: the run is read
// afresh) moves the commit count, which sends the request the barrier's
// way: the answer is the full one, made after the update that read the run
// again, and is not counted as quiet.
func TestProbeQuietAnswerAfterForget(t *testing.T) {
	ix, _ := probeRun(t, Options{})
	awaitQuiet(t, ix, "apple", hist, true)
	forget := ix.cacheHost().Forget
	ix.fw.beforeQuiet = func() {
		ix.fw.beforeQuiet = nil
		forget()
	}
	if quietAnswer(t, ix, "apple", hist, true) {
		t.Fatal("an answer made after the state was forgotten counted as quiet")
	}
	if ix.fw.beforeQuiet != nil {
		t.Fatal("the search was not about to be answered quietly")
	}
}

// TestProbeCancelledPass: a request cancelled at the barrier after a change
// drained the probe's event, but its update never ran; while the watcher's
// loop has not taken that event either (held), the next request must not
// be answered quietly, and sees the change. Both slow passes: a search's
// (freshBarrier) and a record request's (Outline: freshIfWatched).
func TestProbeCancelledPass(t *testing.T) {
	for i, how := range []string{"search", "outline"} {
		t.Run(how, func(t *testing.T) {
			ix, root := probeRun(t, Options{})
			awaitQuiet(t, ix, "apple", hist, true)
			free := holdWatcher(ix)
			defer free()
			word, rel := fmt.Sprintf("cancelled%dword", i), "episode-1/agent0/n0.txt"
			appendFile(t, root, rel, "noted "+word+"\n")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var err error
			if how == "search" {
				_, err = ix.Search(ctx, allEvidence(word))
			} else {
				_, err = ix.Outline(ctx, filepath.Join(ix.Root(), filepath.FromSlash(hist)), 0)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled request returned %v", err)
			}
			if ix.fw.Quiet(ix.fw.CurrentBarrier()) {
				t.Fatal("quiet after a pass that was cancelled: what it drained is not committed")
			}
			free()
			if quietAnswer(t, ix, word, rel, true) {
				t.Fatal("the search after the cancelled pass was answered quietly")
			}
		})
	}
}

// TestProbeMovedAndReplacedFolder: agent2 moved to agent0-old and a new
// agent2 made, both watched by an update (the moved one first, as its
// name sorts) before the watcher's loop takes the move (held). With the
// real fsnotify and probe: a word appended in the moved folder afterwards
// is found by the search made right after it (fsnotify's one watch a path
// once dropped that folder's events while it counted as watched, and no
// update looked at it again).
func TestProbeMovedAndReplacedFolder(t *testing.T) {
	ix, root := probeRun(t, Options{})
	awaitQuiet(t, ix, "apple", hist, true)
	free := holdWatcher(ix)
	defer free()
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	ino := func(rel string) uint64 {
		info, err := os.Lstat(abs(rel))
		must(t, err)
		_, i := runfs.FileID(info)
		return i
	}
	const moved, replaced = "episode-1/agent0-old", "episode-1/agent2"
	must(t, os.Rename(abs(replaced), abs(moved)))
	must(t, os.Mkdir(abs(replaced), 0o755))
	ix.refreshMu.Lock() // as an update does (no other runs meanwhile)
	ix.fw.Watch(moved, ino(moved))
	ix.fw.Watch(replaced, ino(replaced))
	ix.refreshMu.Unlock()
	free()
	for i := range 3 {
		word := fmt.Sprintf("movedaway%dword", i)
		appendFile(t, root, moved+"/n0.txt", "noted "+word+"\n")
		if !hasWord(t, ix, word, moved+"/n0.txt") {
			t.Fatalf("append %d in the moved folder: not found by the search right after it", i)
		}
	}
}

// holdWatcher makes the watcher's loop wait before it takes each event;
// the function returned (safe to call twice) lets it go on.
func holdWatcher(ix *Index) (free func()) {
	hold := make(chan struct{})
	ix.fw.holdEvents.Store(&hold)
	var release sync.Once
	return func() { release.Do(func() { ix.fw.holdEvents.Store(nil); close(hold) }) }
}
