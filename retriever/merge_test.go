package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"runls/internal/store"
	"runls/masking"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// Many small updates (appends that leave dead tail pieces behind, a rewrite,
// a deletion) are merged into few segments, and the index still equals one
// built from scratch, pieces and statistics.
func TestMergeKeepsTheIndex(t *testing.T) {
	root := writeRun(t, map[string]string{
		hist:                    rec("c1", "A said: first"),
		note:                    "apple one\n",
		"episode-2/b/b.history": rec("c1", "B said: other"),
		"episode-2/b/gone.txt":  "apple gone\n",
	})
	opts := Options{Root: root, Interpreter: mustRules(t)}
	ix := openTest(t, opts)
	for i := range 3 * mergeSmallAt {
		appendFile(t, root, hist, rec("c1", fmt.Sprintf("A said: apple %d", i))+"  more apple\n")
		appendFile(t, root, note, fmt.Sprintf("apple line %d\n", i))
		if i == mergeSmallAt {
			writeFile(t, root, "episode-2/b/b.history", rec("c2", "B said: rewritten apple"))
		}
		if i == mergeSmallAt+2 {
			must(t, removeFile(root, "episode-2/b/gone.txt"))
		}
		assertFollowed(t, ix, opts, nil)
	}
	ix.awaitMerges()
	if n := len(ix.state.Segments); n >= mergeSmallAt+1 {
		t.Fatalf("%d segments after %d updates: small ones are not merged", n, 3*mergeSmallAt)
	}
	for _, s := range ix.state.Segments {
		if s.DeadCount() != deadCountSlow(s) {
			t.Fatalf("dead count %d, bits say %d", s.DeadCount(), deadCountSlow(s))
		}
	}
	items := search(t, ix, Request{Query: "apple", Episode: "episode-1", Conversation: "c1", TopK: 100})
	if len(items) != 3*mergeSmallAt*2+3 { // said, lines, "more apple" once, "apple one", "rewritten apple"
		t.Fatalf("%d items for apple, want %d: %q", len(items), 3*mergeSmallAt*2+3, texts(items))
	}
}

func deadCountSlow(s *corpus.Segment) int {
	n := 0
	for d := uint32(0); d < uint32(s.Docs()); d++ {
		if s.Dead(d) {
			n++
		}
	}
	return n
}

// mergeSmallAt is how many small segments the engine merges at once.
const mergeSmallAt = bm25.MergeFactor

func removeFile(root, rel string) error {
	return os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
}

// A merge held half-way (built and flushed, not yet swapped in) while a
// server's searches go on: each search answers at once (the merge holds no
// lock), from the segments the merge replaces, as before the merge; an
// update that kills pieces of those segments runs beside it; after it, the
// index answers as a fresh one with fewer segments; and a reopen restores
// the merged segments from the entry, answering as a fresh index.
func TestSearchDuringMerge(t *testing.T) {
	files := map[string]string{}
	for i := range 24 {
		files[fmt.Sprintf("episode-%d/agent%d/agent%d.history", 1+i%3, i, i)] = rec("c1", fmt.Sprintf("deploy apple note %d", i)) + rec("c3", "started earlier") + "  continued line\n"
	}
	run := writeRun(t, files)
	root := cacheRoot(t)
	opts := Options{Root: run, Masker: masking.HidingOutside(run), Cache: CacheOptions{Root: root}, cacheDelay: time.Hour, flushDocs: 1}
	ix := openTest(t, opts)
	ix.batchDocs = 3 // many small segments
	ix.mergesOff.Store(true)
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	startWatch(t, ix)
	n, _, _, _ := ix.fw.Counts()
	waitWatched(t, ix, n)
	reqs := []Request{allEvidence("deploy"), allEvidence("apple note"), {Query: "started earlier", TopK: 5}, {Query: "deploy apple", TopK: 3}}
	want := make([]Result, len(reqs))
	for i, req := range reqs {
		want[i] = searchResult(t, ix, req) // and the change probe drained: quiet from here
	}
	segments := len(ix.state.Segments)
	if segments < 2*mergeSmallAt {
		t.Fatalf("%d segments: too few to merge twice", segments)
	}

	held, release, _ := holdFirstMerge(ix)
	ix.mergesOff.Store(false)
	ix.mergeLater()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no merge began")
	}
	quiet := ix.fw.quietAnswers.Load()
	for i, req := range reqs {
		got := make(chan Result, 1)
		go func() { got <- searchResult(t, ix, req) }()
		select {
		case res := <-got:
			if !reflect.DeepEqual(res, want[i]) {
				t.Fatalf("search %+v during the merge:\n got  %+v\n want %+v", req, res, want[i])
			}
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatalf("search %+v waited for the merge", req)
		}
	}
	if q := ix.fw.quietAnswers.Load() - quiet; q != int64(len(reqs)) {
		t.Errorf("%d of %d searches during the merge answered on the quiet path", q, len(reqs))
	}
	if n := len(ix.state.Segments); n != segments {
		t.Fatalf("%d segments during the merge, want the %d before it", n, segments)
	}
	// An update beside the merge: it kills pieces of the segments being
	// merged (a file rewritten, one removed) and adds a segment; the
	// merge's swap kills them in the merged segment.
	for i := range 24 {
		rel := fmt.Sprintf("episode-%d/agent%d/agent%d.history", 1+i%3, i, i)
		if i == 1 {
			must(t, removeFile(run, rel))
			continue
		}
		writeFile(t, run, rel, rec("c1", fmt.Sprintf("deploy rewritten zebra %d", i)))
	}
	updated := make(chan []Item, 1)
	go func() { updated <- search(t, ix, allEvidence("zebra")) }()
	select {
	case items := <-updated:
		if len(items) != 23 {
			t.Fatalf("the update beside the merge: %q", texts(items))
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("an update waited for the merge")
	}
	close(release)
	ix.awaitMerges()
	merged := len(ix.state.Segments)
	if merged >= segments/2 {
		t.Fatalf("%d segments merged into %d", segments, merged)
	}
	for _, s := range ix.state.Segments {
		if s.DeadCount() != deadCountSlow(s) {
			t.Fatalf("dead count %d, bits say %d", s.DeadCount(), deadCountSlow(s))
		}
	}
	assertSameAnswers(t, ix, opts)
	must(t, ix.Close())

	again, restored := reopened(t, opts, root)
	if !restored {
		t.Fatal("not restored")
	}
	again.awaitMerges()
	if n := len(again.state.Segments); n != merged {
		t.Fatalf("the reopen restored %d segments, want the %d merged", n, merged)
	}
	assertSameAnswers(t, again, opts)
}

// An index closed while a merge is under way waits for no more than that
// merge (the policy had three more to make), and leaves an entry that
// reopens as a fresh index.
func TestCloseDuringMerge(t *testing.T) {
	files := map[string]string{}
	for i := range 64 {
		files[fmt.Sprintf("episode-%d/agent%d/agent%d.history", 1+i%3, i, i)] = rec("c1", fmt.Sprintf("deploy apple note %d", i)) + "  continued line\n"
	}
	run := writeRun(t, files)
	root := cacheRoot(t)
	opts := Options{Root: run, Cache: CacheOptions{Root: root}, cacheDelay: time.Hour, flushDocs: 1}
	ix := openTest(t, opts)
	ix.batchDocs = 2 // 32 segments: four merges of eight
	held, release, merges := holdFirstMerge(ix)
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	<-held
	closed := make(chan error, 1)
	go func() { closed <- ix.Close() }()
	for !ix.closing() {
		time.Sleep(time.Millisecond)
	}
	close(release)
	select {
	case err := <-closed:
		must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for every merge")
	}
	if n := merges.Load(); n != 1 {
		t.Fatalf("%d merges made, want the one under way at the close only", n)
	}
	again, restored := reopened(t, opts, root)
	if !restored {
		t.Fatal("not restored")
	}
	assertSameAnswers(t, again, opts)
}

// An index reading an entry another writes merges none of the segments it
// read back from the entry (its merge could not be written out, and would
// copy to the heap what the mapping holds), only those it built itself.
func TestReaderMergesNoMappedSegment(t *testing.T) {
	run, opts := flushRun(t)
	root := cacheRoot(t)
	first := openFlushing(t, opts, root)
	first.mergesOff.Store(true) // a batch a folder, each flushed: 9 segments
	refresh(t, first)
	must(t, first.Close())

	writer := openFlushing(t, opts, root)
	refresh(t, writer)
	reader := openFlushing(t, opts, root)
	refresh(t, reader)
	if reader.cache.Entry().Writable() || !writer.cache.Entry().Writable() {
		t.Fatal("not one writer and one reader")
	}
	mapped := func(ix *Index) (n int) {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		for _, s := range ix.state.Segments {
			if s.Mapped {
				n++
			}
		}
		return n
	}
	before := mapped(reader)
	if before < mergeSmallAt {
		t.Fatalf("%d mapped segments: too few to merge", before)
	}
	for i := range 2 * mergeSmallAt {
		appendFile(t, run, "episode-1/alice/notes.txt", fmt.Sprintf("apple fresh %d\n", i))
		refresh(t, reader)
	}
	if n := mapped(reader); n != before {
		t.Fatalf("the reader merged mapped segments: %d of %d left", n, before)
	}
	if n := len(reader.state.Segments); n >= before+2*mergeSmallAt {
		t.Fatalf("%d segments: the reader's own were not merged", n)
	}
	assertSameAnswers(t, reader, opts)
	refresh(t, writer) // the writer merges its mapped ones
	if n := mapped(writer); n >= before {
		t.Fatalf("the writer left its %d mapped segments unmerged", n)
	}
}

// A merge after the entry was written is written too (it counts as a
// commit): a reopen restores the merged segments, not the commit before.
func TestMergeIsWritten(t *testing.T) {
	run, opts := flushRun(t)
	root := cacheRoot(t)
	ix := openFlushing(t, opts, root)
	held, release, _ := holdFirstMerge(ix)
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	<-held
	ix.cache.WriteNow() // the index's commit, before the merges
	unmerged := len(ix.state.Segments)
	close(release)
	ix.awaitMerges()
	merged := len(ix.state.Segments)
	if merged >= unmerged {
		t.Fatalf("%d segments merged into %d", unmerged, merged)
	}
	must(t, ix.Close())
	again, restored := reopened(t, opts, root)
	if !restored {
		t.Fatal("not restored")
	}
	if n := len(again.state.Segments); n != merged {
		t.Fatalf("the reopen restored %d segments, want the %d merged (%d before)", n, merged, unmerged)
	}
	assertSameAnswers(t, again, Options{Root: run, Masker: opts.Masker})
}

// An entry left part-merged (its first index closed before its merges)
// and reopened with nothing changed: the reopen's update and its first
// answer merge nothing (no merge reaches its swap before that answer);
// MergeIdle, as a server calls it once idle, merges it, and a reopen
// after that reads the merged entry, with nothing more to merge.
func TestMergeIdleAfterReopen(t *testing.T) {
	run, opts := flushRun(t)
	ageRun(t, run) // else the reopen reads its files again, and merges after that update
	root := cacheRoot(t)
	first := openFlushing(t, opts, root)
	first.mergesOff.Store(true) // a batch a folder, each flushed: 9 segments
	refresh(t, first)
	unmerged := len(first.state.Segments)
	must(t, first.Close())
	if unmerged < mergeSmallAt {
		t.Fatalf("%d segments: too few to merge", unmerged)
	}

	ix := openFlushing(t, opts, root)
	var merges atomic.Int32
	ix.mergeHeld = func() { merges.Add(1) }
	refresh(t, ix) // the reopen's update, and any merge it started
	if !ix.restored.Load() {
		t.Fatal("not restored")
	}
	search(t, ix, allEvidence("deploy")) // the reopen's first answer
	ix.awaitMerges()
	if n := merges.Load(); n != 0 {
		t.Fatalf("%d merges beside the reopen's first answer", n)
	}
	if n := len(ix.state.Segments); n != unmerged {
		t.Fatalf("%d segments after the reopen, want the entry's %d", n, unmerged)
	}
	ix.MergeIdle()
	ix.awaitMerges()
	merged := len(ix.state.Segments)
	if merged >= unmerged || merges.Load() == 0 {
		t.Fatalf("MergeIdle: %d segments merged into %d (%d merges)", unmerged, merged, merges.Load())
	}
	assertSameAnswers(t, ix, opts)
	must(t, ix.Close())

	again := openFlushing(t, opts, root)
	again.mergeHeld = func() { merges.Add(1) }
	refresh(t, again)
	if !again.restored.Load() {
		t.Fatal("not restored")
	}
	before := merges.Load()
	again.MergeIdle()
	again.awaitMerges()
	if n := len(again.state.Segments); n != merged || merges.Load() != before {
		t.Fatalf("the reopen after the idle merges: %d segments (want %d), %d merges more", n, merged, merges.Load()-before)
	}
	assertSameAnswers(t, again, opts)
}

// holdFirstMerge makes ix's first merge wait before its swap until release
// is closed, held closed once it waits; merges counts the merges that
// reached their swap.
func holdFirstMerge(ix *Index) (held, release chan struct{}, merges *atomic.Int32) {
	held, release, merges = make(chan struct{}), make(chan struct{}), new(atomic.Int32)
	ix.mergeHeld = func() {
		if merges.Add(1) == 1 {
			close(held)
			<-release
		}
	}
	return held, release, merges
}

// TestMergeKilledEntry: what a kill -9 leaves in the middle of a merge is
// an entry that the next open uses, and that answers as a fresh index. The
// entry's files are copied as they are at the merge's two points (what a
// kill there leaves on disk; no write of the entry runs beside them, the
// writer waiting an hour): its output flushed to the entry but not swapped
// in (mergeHeld), and swapped in with its sources' blobs dropped, before
// the entry's next commit (mergeDone). The merge is a reopen's idle merge of
// a committed, part-merged entry, every segment a blob of its own.
func TestMergeKilledEntry(t *testing.T) {
	run, opts := flushRun(t)
	ageRun(t, run) // else the reopen reads its files again
	for _, point := range []string{"flushed", "swapped"} {
		t.Run(point, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			root, err := store.OpenRoot(dir)
			must(t, err)
			first := openFlushing(t, opts, root)
			first.mergesOff.Store(true) // a batch a folder, each flushed
			refresh(t, first)
			unmerged := len(first.state.Segments)
			must(t, first.Close())

			ix := openFlushing(t, opts, root)
			killed := filepath.Join(t.TempDir(), "killed")
			var at atomic.Int32
			snapshot := func() {
				if at.Add(1) == 1 {
					must(t, os.CopyFS(killed, os.DirFS(dir)))
				}
			}
			if point == "flushed" {
				ix.mergeHeld = snapshot
			} else {
				ix.mergeDone = snapshot
			}
			refresh(t, ix)
			ix.MergeIdle()
			ix.awaitMerges()
			if at.Load() == 0 || len(ix.state.Segments) >= unmerged {
				t.Fatalf("the merge never reached the point (%d segments of %d)", len(ix.state.Segments), unmerged)
			}
			must(t, ix.Close())

			kroot, err := store.OpenRoot(killed)
			must(t, err)
			ko := opts
			ko.Cache = CacheOptions{Root: kroot}
			again := openTest(t, ko)
			refresh(t, again)
			if !again.restored.Load() {
				t.Fatal("the entry a kill left was not used")
			}
			if n := len(again.state.Segments); n != unmerged {
				t.Errorf("%d segments from the entry a kill left, want its commit's %d", n, unmerged)
			}
			assertSameAnswers(t, again, opts)
		})
	}
}

// ageRun dates every file of run an hour back, out of the racy window: a
// reopen then takes the entry's states as they are, reading no file again.
func ageRun(t *testing.T, run string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	must(t, filepath.Walk(run, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
}
