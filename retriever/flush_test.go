package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/store"
	"runls/masking"
	"runls/retriever/internal/corpus"
)

// flushRun writes a run of nine agent folders: read a batch a folder
// (openFlushing), they make more segments than the engine merges at once.
func flushRun(t *testing.T) (string, Options) {
	t.Helper()
	files := map[string]string{}
	for ep := 1; ep <= 3; ep++ {
		for _, a := range []string{"alice", "bob", "carol"} {
			var b strings.Builder
			for i := range 6 {
				b.WriteString(rec(fmt.Sprintf("c%d", i%3), fmt.Sprintf("deploy %s step %d of episode %d", a, i, ep)))
			}
			files[fmt.Sprintf("episode-%d/%s/%s.history", ep, a, a)] = b.String()
			files[fmt.Sprintf("episode-%d/%s/notes.txt", ep, a)] = fmt.Sprintf("apple note %d\nrotate token %s\n", ep, a)
		}
	}
	run := writeRun(t, files)
	return run, Options{Root: run, Masker: masking.HidingOutside(run)}
}

// openFlushing opens opts' run with the cache of root, every segment
// flushed as it is made, a batch a folder, writes at Close only.
func openFlushing(t *testing.T, opts Options, root *store.Root) *Index {
	t.Helper()
	opts.Cache = CacheOptions{Root: root}
	opts.cacheDelay, opts.flushDocs = time.Hour, 1
	ix := openTest(t, opts)
	ix.batchInput = 1 // a batch a folder
	return ix
}

func refresh(t *testing.T, ix *Index) {
	t.Helper()
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix.awaitMerges() // the merges after the update (merge.go)
}

// blobFiles are the blob files of ix's entry folder, sorted.
func blobFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".blob") {
			out = append(out, e.Name())
		}
	}
	return out
}

// flushedBlobs checks that every segment of ix is mapped from a blob its
// writer knows and gives those blobs' names, sorted.
func flushedBlobs(t *testing.T, ix *Index) []string {
	t.Helper()
	var names []string
	ix.cache.BlobsOf(func(blobOf func(*corpus.Segment) (store.BlobRef, bool), _ int) {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		for _, s := range ix.state.Segments {
			ref, ok := blobOf(s)
			if !ok {
				t.Fatalf("a segment of %d pieces was not flushed", s.Docs())
			}
			names = append(names, ref.Name)
		}
	})
	slices.Sort(names)
	return names
}

// abandon ends ix's writer as a kill would: nothing more is written, and
// the lock is let go (the process's end lets it go).
func abandon(t *testing.T, ix *Index) {
	t.Helper()
	must(t, ix.cache.Abandon())
}

// The segments of a first indexing are written as they are built, before
// any commit; a process killed then leaves blobs no commit names, which the
// next open removes, and that open answers as a fresh index.
func TestFlushKilledBeforeAnyCommit(t *testing.T) {
	_, opts := flushRun(t)
	root := cacheRoot(t)
	ix := openFlushing(t, opts, root)
	refresh(t, ix)
	dir := ix.cache.Entry().Dir()
	if _, err := os.Stat(filepath.Join(dir, "manifest")); !os.IsNotExist(err) {
		t.Fatalf("a manifest before the first write: %v", err)
	}
	flushed := flushedBlobs(t, ix)
	if len(flushed) == 0 {
		t.Fatal("no segment flushed")
	}
	// Merged inputs' blobs are gone already: the folder holds the index's
	// segments and nothing else.
	if got := blobFiles(t, dir); !slices.Equal(got, flushed) {
		t.Fatalf("blob files %q, want the segments' %q", got, flushed)
	}
	assertSameAnswers(t, ix, opts)
	abandon(t, ix)

	core, logs := observer.New(zap.InfoLevel)
	o := opts
	o.Logger = zap.New(core)
	back, restored := reopened(t, o, root)
	if restored {
		t.Fatal("restored an entry that no commit was made in")
	}
	if n := logs.FilterMessageSnippet("mended the cache entry").Len(); n != 1 {
		t.Errorf("%d INFOs of the blobs removed, want 1: %v", n, logs.All())
	}
	assertSameAnswers(t, back, opts)
	must(t, back.Close())
	again := reopenedSame(t, opts, root)
	snapNames := manifestBlobs(t, again)
	if got := blobFiles(t, again.cache.Entry().Dir()); !slices.Equal(got, snapNames) {
		t.Fatalf("blob files %q, want the commit's %q", got, snapNames)
	}
}

// reopenedSame reopens opts' run from its entry in root, which must be
// restored, and checks that it answers as a fresh index.
func reopenedSame(t *testing.T, opts Options, root *store.Root) *Index {
	t.Helper()
	opts.Logger = nil
	ix, restored := reopened(t, opts, root)
	if !restored {
		t.Fatal("the entry was not restored")
	}
	assertSameAnswers(t, ix, opts)
	return ix
}

func manifestBlobs(t *testing.T, ix *Index) []string {
	t.Helper()
	var names []string
	for _, b := range ix.cache.Restored().Blobs() {
		names = append(names, b.Ref().Name)
	}
	slices.Sort(names)
	return names
}

// A merge's inputs' blobs are removed when its output is flushed, but only
// those no commit names: a committed one stays until the next commit, and
// every open in between finds the blobs of its commit.
func TestFlushMergeRemovesOnlyUncommittedInputs(t *testing.T) {
	run, opts := flushRun(t)
	root := cacheRoot(t)
	ix := openFlushing(t, opts, root)
	refresh(t, ix)
	must(t, ix.Close())

	ix = openFlushing(t, opts, root)
	if ix.cache.Restored() == nil {
		t.Fatal("not restored")
	}
	committed := manifestBlobs(t, ix)
	refresh(t, ix)
	// Every file grown: each makes segments, which merge with the restored
	// ones.
	for ep := 1; ep <= 3; ep++ {
		for _, a := range []string{"alice", "bob", "carol"} {
			var b strings.Builder
			for i := range 4 {
				b.WriteString(rec("c9", fmt.Sprintf("fresh deploy %d by %s", i, a)))
			}
			appendFile(t, run, fmt.Sprintf("episode-%d/%s/%s.history", ep, a, a), b.String())
		}
	}
	refresh(t, ix)
	dir := ix.cache.Entry().Dir()
	files := blobFiles(t, dir)
	live := flushedBlobs(t, ix)
	for _, name := range committed {
		if !slices.Contains(files, name) {
			t.Fatalf("blob %s of the commit removed before a commit dropped it", name)
		}
	}
	var stray []string
	for _, name := range files {
		if !slices.Contains(committed, name) && !slices.Contains(live, name) {
			stray = append(stray, name)
		}
	}
	if len(stray) > 0 {
		t.Fatalf("blobs of merged-away segments no commit names left: %q", stray)
	}
	if slices.Equal(live, committed) {
		t.Fatal("no segment was merged or added: the test tests nothing")
	}
	// Another process opening the entry now restores the last commit whole.
	other, err := root.Open(run, cacheConfig(opts), store.Options{})
	must(t, err)
	snap, err := other.Snapshot()
	must(t, err)
	if snap == nil {
		t.Fatal("the commit is gone")
	}
	must(t, snap.Close())
	must(t, other.Close())

	assertSameAnswers(t, ix, opts)
	must(t, ix.Close())
	back := reopenedSame(t, opts, root)
	if got, want := blobFiles(t, back.cache.Entry().Dir()), manifestBlobs(t, back); !slices.Equal(got, want) {
		t.Fatalf("blob files %q, want the commit's %q", got, want)
	}
}

// Two indexes of one run and cache indexing at once: one writes the entry
// and flushes; the other reads it and keeps its segments on the heap, and
// neither removes a blob the other maps. Both answer as a fresh index,
// before and after the writer ends and the other takes the entry over.
func TestFlushTwoIndexesAtOnce(t *testing.T) {
	run, opts := flushRun(t)
	root := cacheRoot(t)
	a, b := openFlushing(t, opts, root), openFlushing(t, opts, root)
	var wg sync.WaitGroup
	for _, ix := range []*Index{a, b} {
		wg.Go(func() { refresh(t, ix) })
	}
	wg.Wait()
	writer, reader := a, b
	if !a.cache.Entry().Writable() {
		writer, reader = b, a
	}
	if reader.cache.Entry().Writable() {
		t.Fatal("two writers")
	}
	flushedBlobs(t, writer)
	reader.cache.BlobsOf(func(_ func(*corpus.Segment) (store.BlobRef, bool), n int) {
		if n != 0 {
			t.Errorf("the reader flushed %d segments", n)
		}
	})
	assertSameAnswers(t, writer, opts)
	assertSameAnswers(t, reader, opts)

	appendFile(t, run, "episode-1/alice/notes.txt", "apple note fresh\n")
	must(t, writer.Close())
	// The reader takes the entry over at its next write, and flushes from
	// then on.
	refresh(t, reader)
	reader.cache.WriteNow()
	if !reader.cache.Entry().Writable() {
		t.Fatal("the reader did not take the entry over")
	}
	appendFile(t, run, "episode-2/bob/bob.history", rec("c1", "fresh deploy by bob again")+rec("c1", "more")+rec("c2", "and more")+rec("c2", "fresh"))
	refresh(t, reader)
	assertSameAnswers(t, reader, opts)
	must(t, reader.Close())
	reopenedSame(t, opts, root)
}

// The differential test of flushing: an index whose segments are all
// flushed and mapped as they are made answers as the heap-only index of
// the same files, through a first indexing and every kind of change
// following makes (appends, a rewrite, a deletion, a new episode), with
// merges of mapped segments among them.
func TestFlushedEqualsHeapOnly(t *testing.T) {
	run, opts := flushRun(t)
	ix := openFlushing(t, opts, cacheRoot(t))
	refresh(t, ix)
	flushedBlobs(t, ix)
	assertSameAnswers(t, ix, opts)
	changes := []func(){
		func() {
			appendFile(t, run, "episode-1/alice/alice.history", rec("c1", "fresh deploy")+"  continued line\n"+rec("c2", "pending continued"))
			appendFile(t, run, "episode-2/bob/notes.txt", "apple note fresh\n")
		},
		func() {
			p := filepath.Join(run, "episode-3/carol/carol.history")
			must(t, os.Remove(p))
			writeFile(t, run, "episode-3/carol/carol.history", rec("c7", "rotate token started earlier")+rec("c7", "deploy"))
		},
		func() { must(t, os.Remove(filepath.Join(run, "episode-2/alice/alice.history"))) },
		func() {
			var b strings.Builder
			for i := range 10 {
				b.WriteString(rec("c8", fmt.Sprintf("fresh episode deploy %d", i)))
			}
			writeFile(t, run, "episode-4/dave/dave.history", b.String())
		},
	}
	for i, change := range changes {
		change()
		refresh(t, ix)
		t.Run(fmt.Sprint("change ", i), func(t *testing.T) { assertSameAnswers(t, ix, opts) })
	}
}
