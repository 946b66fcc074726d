package retriever

// Tests of a restored file's columns read in place from the state blob and
// checked at their first use (internal/persist/inplace.go, issue 33).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/store"
	"runls/retriever/internal/persist"
)

// inplaceRun is a run whose state blob's record tables and line indexes
// span many chunks (store.ChunkSize): a big log, a history and a note.
func inplaceRun(t *testing.T) string {
	var log, hist strings.Builder
	levels := []string{"ERROR", "INFO ", "WARN ", "DEBUG"}
	for i := range 100000 {
		fmt.Fprintf(&log, "2026-10-21 %02d:%02d:%02d %s [running] [conv-%d] call %d failed %d deploy\n",
			i/2/3600, i/2/60%60, i/2%60, levels[i%4], 1+i%3, i%50, i%7)
		switch {
		case i%9 == 0:
			log.WriteString("    at deploy.Step(step.go:12)\n") // a record of two lines
		case i%5000 == 1:
			log.WriteString("deploy.Failed: unindented\n") // a span the diagnostics warn of
		case i%7000 == 2:
			log.WriteString("2026-10-21 00:00:00 INFO  [running] no conversation field\n") // a run of unfielded records
		}
	}
	for i := range 6000 {
		hist.WriteString(rec(fmt.Sprintf("conv-%d", 1+i%3), fmt.Sprintf("deploy told step %d of shard %d", i, i%31)))
	}
	return writeRun(t, map[string]string{
		"episode-1/alice/alice.log":     log.String(),
		"episode-1/alice/alice.history": hist.String(),
		"episode-1/alice/notes.txt":     bigNotes(200 << 10),
	})
}

// inplaceViews are the views of the file states a request can make first
// after a reopen, each answered as a value to compare with a fresh index's.
func inplaceViews(run string) []struct {
	name string
	view func(t *testing.T, ix *Index) any
} {
	ctx := context.Background()
	log := filepath.Join(run, "episode-1/alice/alice.log")
	return []struct {
		name string
		view func(t *testing.T, ix *Index) any
	}{
		{"search", func(t *testing.T, ix *Index) any {
			return searchResult(t, ix, Request{Query: "deploy shard failed", Episode: "episode-1", Conversation: "conv-2", TopK: MaxTopK})
		}},
		{"records", func(t *testing.T, ix *Index) any {
			res, err := ix.Records(ctx, RecordsRequest{Episode: "episode-1", Limit: 1000, Lines: true})
			must(t, err)
			return res
		}},
		{"outline", func(t *testing.T, ix *Index) any {
			res, err := ix.Outline(ctx, log, 0)
			must(t, err)
			return res
		}},
		{"diagnostics", func(t *testing.T, ix *Index) any { return ix.Diagnostics(log, Uncapped) }},
		{"failures", func(t *testing.T, ix *Index) any {
			res, err := ix.Failures(ctx, FailuresRequest{MinLevel: "warn"})
			must(t, err)
			return res
		}},
		{"conversations", func(t *testing.T, ix *Index) any {
			res, err := ix.Conversations(ctx, "episode-1")
			must(t, err)
			return res
		}},
		{"lines", func(t *testing.T, ix *Index) any {
			res, err := ix.ReadLines(ctx, ReadRequest{Path: "episode-1/alice/alice.log", First: 20000, Count: 40})
			must(t, err)
			return res
		}},
	}
}

// uncheckedStateChunks lists the chunks of the restored state blob that
// nothing has checked (so read) yet.
func uncheckedStateChunks(ix *Index) (b *store.Blob, offs []int64) {
	b = ix.cache.Restored().Blobs()[persist.BlobState]
	for off := int64(0); off < b.Ref().Length; off += store.ChunkSize {
		if !b.Checked(off, min(store.ChunkSize, b.Ref().Length-off)) {
			offs = append(offs, off)
		}
	}
	return b, offs
}

// flipChunk flips a byte in the middle of the state blob's chunk at off,
// in its file (the mapping sees it).
func flipChunk(t *testing.T, ix *Index, b *store.Blob, off int64) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(ix.cache.Entry().Dir(), b.Ref().Name), os.O_WRONLY, 0)
	must(t, err)
	at := off + min(store.ChunkSize, b.Ref().Length-off)/2
	_, err = f.WriteAt([]byte{b.Bytes()[at] ^ 0x5a}, blobContentAt+at)
	must(t, err)
	must(t, f.Close())
}

// Every view made first after a reopen equals a fresh index's: the
// restored files' columns, read in place and copied at their first use,
// answer as the files indexed afresh do.
func TestInPlaceViewsAsFresh(t *testing.T) {
	run := inplaceRun(t)
	root := cacheRoot(t)
	first, _ := reopened(t, Options{Root: run}, root)
	must(t, first.Close())
	fresh := openTest(t, Options{Root: run})
	for _, v := range inplaceViews(run) {
		t.Run(v.name, func(t *testing.T) {
			ix, restored := reopened(t, Options{Root: run}, root)
			if !restored {
				t.Fatal("not restored")
			}
			if _, offs := uncheckedStateChunks(ix); len(offs) < 4 {
				t.Fatalf("%d chunks of the state left unchecked by the reopen, want the columns' many", len(offs))
			}
			if got, want := v.view(t, ix), v.view(t, fresh); !reflect.DeepEqual(got, want) {
				t.Errorf("after a reopen:\n got %+v\nwant %+v", got, want)
			}
			must(t, ix.Close())
		})
	}
}

// Every chunk of the state blob the reopen left unchecked, flipped after
// the reopen and before its first use: each view gives the fresh index's
// answer, one WARN says the entry was dropped, and the next open restores
// a clean entry. Each view is tried with every such chunk flipped, and the
// records view (which reads every file's columns) with each chunk alone.
func TestReopenStateCorruptedBeforeFirstUse(t *testing.T) {
	run := inplaceRun(t)
	fresh := openTest(t, Options{Root: run})
	// try reopens, flips, and makes the view; full: then also every
	// answer as a fresh index's, and the entry's next open.
	try := func(t *testing.T, root *store.Root, full bool, flip func(ix *Index, b *store.Blob, offs []int64) bool, view func(*testing.T, *Index) any) {
		t.Helper()
		core, logs := observer.New(zap.WarnLevel)
		ix, restored := reopened(t, Options{Root: run, Logger: zap.New(core)}, root)
		if !restored {
			t.Fatal("not restored")
		}
		b, offs := uncheckedStateChunks(ix)
		if !flip(ix, b, offs) {
			must(t, ix.Close())
			return
		}
		if got, want := view(t, ix), view(t, fresh); !reflect.DeepEqual(got, want) {
			t.Errorf("the view over the corrupted entry:\n got %+v\nwant %+v", got, want)
		}
		if !ix.cache.Dropped() {
			t.Error("the entry was not dropped")
		}
		if n := logs.FilterMessageSnippet("not as written").Len(); n != 1 || logs.FilterMessageSnippet("cache entry").Len() != 1 {
			t.Errorf("%d WARNs of the corruption, want 1 and no other of the cache entry: %v", n, logs.All())
		}
		if !full {
			must(t, ix.Close())
			return
		}
		assertSameAnswers(t, ix, Options{Root: run})
		must(t, ix.Close())
		again, restored := reopened(t, Options{Root: run}, root)
		if !restored {
			t.Fatal("the entry was not written again")
		}
		if got, want := view(t, again), view(t, fresh); !reflect.DeepEqual(got, want) {
			t.Errorf("the view after the entry was written again:\n got %+v\nwant %+v", got, want)
		}
		must(t, again.Close())
	}
	for _, v := range inplaceViews(run) {
		t.Run("every/"+v.name, func(t *testing.T) {
			root := cacheRoot(t)
			first, _ := reopened(t, Options{Root: run}, root)
			must(t, first.Close())
			try(t, root, true, func(ix *Index, b *store.Blob, offs []int64) bool {
				if len(offs) < 4 {
					t.Fatalf("%d chunks of the state left unchecked by the reopen, want the columns' many", len(offs))
				}
				for _, off := range offs {
					flipChunk(t, ix, b, off)
				}
				return true
			}, v.view)
		})
	}
	records := inplaceViews(run)[1]
	root := cacheRoot(t)
	first, _ := reopened(t, Options{Root: run}, root)
	must(t, first.Close())
	for k := 0; ; k++ {
		more := false
		t.Run(fmt.Sprintf("chunk-%d/records", k), func(t *testing.T) {
			try(t, root, false, func(ix *Index, b *store.Blob, offs []int64) bool {
				if more = k < len(offs); more {
					flipChunk(t, ix, b, offs[k])
				}
				return more
			}, records.view)
		})
		if !more || t.Failed() {
			break
		}
	}
}

// A restored log's diagnostics, made after a reopen (a server publishes
// every record file's), equal a fresh index's and leave its record table in
// the mapping: the tables kept of the files warned about were 9.5 MB of the
// heap after a 100,000-file reopen (issue 33). A view that keeps reading the
// table (records) still makes it the heap's.
func TestDiagnosticsKeepNoTable(t *testing.T) {
	run := inplaceRun(t)
	root := cacheRoot(t)
	first, _ := reopened(t, Options{Root: run}, root)
	must(t, first.Close())
	fresh := openTest(t, Options{Root: run})
	if _, err := fresh.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix, restored := reopened(t, Options{Root: run}, root)
	if !restored {
		t.Fatal("not restored")
	}
	defer ix.Close()
	log := filepath.Join(run, "episode-1/alice/alice.log")
	fs := ix.recordFile(log)
	if fs == nil || fs.MappedColumns() == nil {
		t.Fatal("the log's columns are not in the mapping")
	}
	for range 2 {
		got, want := ix.Diagnostics(log, Uncapped), fresh.Diagnostics(log, Uncapped)
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("diagnostics after a reopen:\n got %+v\nwant %+v", got, want)
		}
		if persist.ColumnsKept(fs) {
			t.Fatal("the diagnostics made the log's record table the heap's")
		}
	}
	if _, err := ix.Records(context.Background(), RecordsRequest{Episode: "episode-1", Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if !persist.ColumnsKept(fs) {
		t.Error("records left the log's table in the mapping")
	}
}
