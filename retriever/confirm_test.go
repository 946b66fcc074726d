package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPartialAnswerBeforeReopenWalk: a reopen answers before its walk has
// confirmed the run (held here on the root's listing) from its entry, with
// the indexing notice, and never with stale evidence of a file rewritten,
// appended to or deleted while the index was closed: each piece is the text
// at its place in the file as it is now, with the time written there (a
// record rewritten with another time and the same text at the same place:
// only the confirmation tells), and a piece a fresh index makes (a pending
// last line appended to is another piece now). Symbols the same. Once the walk ends the
// answer is a fresh index's.
func TestPartialAnswerBeforeReopenWalk(t *testing.T) {
	ix, run := reopenedAfterChanges(t)
	ctx := context.Background()
	if g := ix.AnswerGrace(); g != ReopenGrace {
		t.Errorf("grace %v, want ReopenGrace", g)
	}
	n := ix.restoredFiles
	ix.restoredFiles = noGraceFiles // a walk that cannot end within ReopenGrace
	if g := ix.AnswerGrace(); g != 0 {
		t.Errorf("grace of an entry of %d files %v, want none", ix.restoredFiles, g)
	}
	ix.restoredFiles = n
	release := holdWalk(ix)
	done := make(chan error, 1)
	go func() {
		_, err := ix.Refresh(ctx, nil)
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); !ix.buildingFirst(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reopen's update did not start")
		}
	}

	// Episode 1's records are evidence (another episode is current).
	req := Request{Query: "deploy", TopK: MaxTopK, Episode: "episode-2", Conversation: "conv-1"}
	res, err := ix.SearchPartial(ctx, req)
	must(t, err)
	syms, err := ix.SymbolsPartial(ctx, "deploy", 0)
	must(t, err)
	// Every piece of a partial answer is one a fresh index makes.
	fresh := openTest(t, Options{Root: run})
	freshSyms, err := fresh.Symbols(ctx, "deploy", 0)
	must(t, err)
	pieces := map[string]map[string]bool{"search": itemKeys(searchResult(t, fresh, req)), "symbols": itemKeys(freshSyms)}
	for name, r := range map[string]Result{"search": res, "symbols": syms} {
		for k := range itemKeys(r) {
			if !pieces[name][k] {
				t.Errorf("%s: stale evidence: %s is not a piece of a fresh index", name, k)
			}
		}
		ns := indexingNotices(r)
		if len(ns) != 1 || ns[0].Value == "100%" || !strings.Contains(ns[0].Message, "reopened") {
			t.Errorf("%s: indexing notices %+v, want one saying the run is being reopened", name, ns)
		}
		files := map[string]bool{}
		for _, it := range r.Items {
			files[it.File] = true
			assertCurrentText(t, name, run, it)
		}
		for _, f := range []string{"episode-1/alice/rewritten.txt", "episode-1/alice/deleted.txt", "episode-1/alice/alice.log", "episode-1/alice/tail.txt"} {
			if files[f] {
				t.Errorf("%s: a partial answer holds %s, changed since its entry was written", name, f)
			}
		}
		for _, f := range []string{"episode-1/alice/kept.txt", "episode-2/bob/other.txt", "episode-1/alice/grown.txt"} {
			if !files[f] {
				t.Errorf("%s: a partial answer leaves out %s, which its entry holds as it is", name, f)
			}
		}
	}

	close(release)
	must(t, <-done)
	final, err := ix.SearchPartial(ctx, req)
	must(t, err)
	if want := searchResult(t, openTest(t, Options{Root: run}), req); !reflect.DeepEqual(final, want) {
		t.Errorf("after the walk:\n got %+v\nwant %+v", final, want)
	}
	assertSameAnswers(t, ix, Options{})
}

// reopenedAfterChanges indexes a run into a cache entry, changes it while
// the index is closed (a note rewritten to the same size with its piece one
// line up at the same offset; a record rewritten with another time and the
// same text at the same place; an append; a file deleted; a file new), and
// opens it again from the entry, not yet updated.
func reopenedAfterChanges(t *testing.T) (*Index, string) {
	t.Helper()
	run := writeRun(t, map[string]string{
		"episode-1/alice/kept.txt":      "deploy kept alpha\nsecond line\n",
		"episode-1/alice/rewritten.txt": "alpha one\nbeta two\ndeploy rocket\n",
		"episode-1/alice/grown.txt":     "deploy grown before\n",
		"episode-1/alice/tail.txt":      "deploy first line\ndeploy rock",
		"episode-1/alice/deleted.txt":   "deploy deleted doomed\n",
		"episode-1/alice/alice.log":     "2026-10-20 09:10:00.010 INFO  [running] deploy rocket launched\n",
		"episode-2/bob/other.txt":       "deploy other bob\n",
	})
	ctx := context.Background()
	opts := Options{Root: run, Cache: CacheOptions{Root: cacheRoot(t)}, cacheDelay: time.Hour}
	first, err := Open(ctx, opts)
	must(t, err)
	if _, err := first.Refresh(ctx, nil); err != nil {
		t.Fatal(err)
	}
	must(t, first.Close())

	// While it was closed: the same size, "deploy rocket" at the same
	// offset on the line before; an append; a file gone; a file new.
	write := func(rel, s string, flag int) {
		f, err := os.OpenFile(filepath.Join(run, rel), flag|os.O_WRONLY|os.O_CREATE, 0o644)
		must(t, err)
		_, err = f.WriteString(s)
		must(t, err)
		must(t, f.Close())
	}
	write("episode-1/alice/rewritten.txt", "alpha one beta two\ndeploy rocket\n", os.O_TRUNC)
	// The same record's text at the same place, another time: only its
	// record table (the item's time) would be stale.
	write("episode-1/alice/alice.log", "2026-10-20 11:10:00.010 INFO  [running] deploy rocket launched\n", os.O_TRUNC)
	write("episode-1/alice/grown.txt", "deploy grown after\n", os.O_APPEND)
	// A pending last line goes on: its piece is another now.
	write("episode-1/alice/tail.txt", "et launched\n", os.O_APPEND)
	must(t, os.Remove(filepath.Join(run, "episode-1/alice/deleted.txt")))
	write("episode-2/bob/new.txt", "deploy new arrival\n", 0)

	ix := openTest(t, opts)
	if !ix.restored.Load() {
		t.Fatal("the entry was not restored")
	}
	return ix, run
}

// holdWalk holds ix's walks on the root's listing until release is closed.
func holdWalk(ix *Index) (release chan struct{}) {
	release = make(chan struct{})
	ix.fw.Listed = func(rel string) {
		if rel == "." {
			<-release
		}
	}
	return release
}

// TestPartialAnswerBeforeReopenUpdate: a reopen's partial answer asked
// before the update started beside it has begun (a server's search racing
// its first Refresh) waits for it to begin and answers from the entry,
// partially, rather than making the update itself.
func TestPartialAnswerBeforeReopenUpdate(t *testing.T) {
	ix, _ := reopenedAfterChanges(t)
	ctx := context.Background()
	release := holdWalk(ix)
	done := make(chan error, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, err := ix.Refresh(ctx, nil)
		done <- err
	}()
	defer func() {
		close(release)
		must(t, <-done)
	}()
	answered := make(chan Result, 1)
	go func() {
		res, err := ix.SearchPartial(ctx, Request{Query: "deploy", TopK: MaxTopK})
		if err != nil {
			res.Notices = append(res.Notices, Notice{Message: err.Error()})
		}
		answered <- res
	}()
	select {
	case res := <-answered:
		if ns := indexingNotices(res); len(ns) != 1 || len(res.Items) == 0 {
			t.Errorf("answer %+v, want a partial one from the entry", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer while the reopen's walk is held: the partial answer went the complete way")
	}
}

// itemKeys is each item's file, line, column and text.
func itemKeys(r Result) map[string]bool {
	keys := map[string]bool{}
	for _, it := range r.Items {
		keys[fmt.Sprintf("%s:%d:%d %q", it.File, it.Location.Range.Start.Line, it.ByteStart, it.Text)] = true
	}
	return keys
}

// assertCurrentText checks that item's text is the file's text at its place
// now.
func assertCurrentText(t *testing.T, name, run string, it Item) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(run, it.File))
	if err != nil {
		t.Errorf("%s: %s:%d %q: %v", name, it.File, it.Location.Range.Start.Line, it.Text, err)
		return
	}
	lines := strings.Split(string(data), "\n")
	l := it.Location.Range.Start.Line
	if l >= len(lines) || it.ByteEnd > len(lines[l]) || lines[l][it.ByteStart:it.ByteEnd] != it.Text {
		t.Errorf("%s: stale evidence: %s:%d %q is not the file's text there now", name, it.File, l, it.Text)
		return
	}
	if it.Time != nil && !strings.HasPrefix(lines[l], *it.Time) {
		t.Errorf("%s: stale evidence: %s:%d %q at %s, written at %.23s now", name, it.File, l, it.Text, *it.Time, lines[l])
	}
}
