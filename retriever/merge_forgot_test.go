package retriever

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// A merge whose sources were forgotten before its swap (the cache entry
// dropped meanwhile: DropMapping forgets the index's state and the writer's
// blobs) is not swapped in, and its flushed output's file is removed then,
// not left in the entry folder for a later writer's cleanup; the index
// answers as a fresh one.
func TestMergeForgottenRemovesItsBlob(t *testing.T) {
	_, opts := flushRun(t)
	root := cacheRoot(t)
	ix := openFlushing(t, opts, root)
	held, release, _ := holdFirstMerge(ix)
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held: // the merge's output flushed, its swap to come
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("no merge began")
	}
	dir := ix.cache.Entry().Dir()
	// The merge's output is flushed but not the index's yet: its file is
	// the one no segment of the index is mapped from.
	var merged []string
	for _, name := range blobFiles(t, dir) {
		if !slices.Contains(flushedBlobs(t, ix), name) {
			merged = append(merged, name)
		}
	}
	if len(merged) != 1 {
		close(release)
		t.Fatalf("blob files besides the segments' %q, want the merge's one", merged)
	}
	ix.cache.DropMapping(errors.New("the test drops the entry"))
	if n := len(ix.state.Segments); n != 0 {
		close(release)
		t.Fatalf("%d segments after the entry was dropped, want none (forgotten)", n)
	}
	close(release)
	ix.awaitMerges()

	if files := blobFiles(t, dir); slices.Contains(files, merged[0]) {
		t.Errorf("the forgotten merge's blob %s left in the entry folder: %q", merged[0], files)
	}
	refresh(t, ix) // the run indexed afresh
	assertSameAnswers(t, ix, opts)
	// The dropped state's other blobs (the merge's inputs and the rest)
	// are the next write's to remove: after it the folder holds its
	// commit's blobs and nothing else.
	must(t, ix.Close())
	again := reopenedSame(t, opts, root)
	if got, want := blobFiles(t, dir), manifestBlobs(t, again); !slices.Equal(got, want) {
		t.Errorf("blob files %q after the write, want the commit's %q", got, want)
	}
}
