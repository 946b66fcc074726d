package retriever

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/store"
	"runls/masking"
	"runls/retriever/internal/persist"
)

// faultRun is a run indexed in seven updates, so that its cache entry
// holds seven small segments: one segment more makes the next update
// merge them all, reading their mappings.
func faultRun(t *testing.T, root *store.Root) (string, Options) {
	t.Helper()
	run := writeRun(t, map[string]string{"episode-1/agent0/agent0.history": rec("c1", "deploy the app") + rec("c2", "rotate token")})
	opts := Options{Root: run, Masker: masking.HidingOutside(run)}
	ix, _ := reopened(t, opts, root)
	for i := 1; i < 7; i++ {
		writeFile(t, run, fmt.Sprintf("episode-%d/agent%d/agent%d.history", 1+i%2, i, i),
			rec("c1", fmt.Sprintf("deploy apple note %d", i))+rec("c3", "started earlier")+"  continued line\n")
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ix.state.Segments); n != 7 {
		t.Fatalf("%d segments, want 7", n)
	}
	must(t, ix.Close())
	return run, opts
}

// A blob's file cut just after the guard's check, before the read that
// follows it, at each place the index reads a mapping: the request is
// answered as by a fresh index, one WARN says the entry was dropped, the
// index answers as a fresh one, and the next open restores a clean entry.
func TestFaultOnTheMappingIsCorruption(t *testing.T) {
	for _, tc := range []struct {
		point, where string
		act          func(t *testing.T, ix *Index, run string, opts Options)
	}{
		{"answer", "answering", func(t *testing.T, ix *Index, run string, opts Options) {
			got := searchResult(t, ix, allEvidence("deploy apple"))
			fresh := openTest(t, Options{Root: run, Masker: opts.Masker})
			if want := searchResult(t, fresh, allEvidence("deploy apple")); !reflect.DeepEqual(got, want) {
				t.Errorf("the faulted search:\n got %+v\nwant %+v", got, want)
			}
		}},
		// The update's first read of the mapping is the grown file's
		// columns, made the heap's at their first use (persist/inplace.go).
		{"update", "a file's columns in the state blob", func(t *testing.T, ix *Index, run string, opts Options) {
			appendFile(t, run, "episode-1/agent0/agent0.history", rec("c1", "deploy once more"))
			sameRecords(t, ix, run, opts)
		}},
		// A view's first read of a restored file's columns (its copy at
		// first use), with nothing changed in the run.
		{"view", "a file's columns in the state blob", func(t *testing.T, ix *Index, run string, opts Options) {
			sameRecords(t, ix, run, opts)
		}},
		// The run indexed afresh after the fault is many small segments
		// (batches of 3 pieces: a file with more pieces than a batch holds
		// is left out, follow.go), more than one merge takes, whose merges
		// the merge goroutine makes before it ends (its merge due kept).
		{"merge", "merging segments", func(t *testing.T, ix *Index, run string, opts Options) {
			ix.batchDocs = 3
			var merges atomic.Int32 // after the fault: the first faults before its swap
			ix.mergeHeld = func() { merges.Add(1) }
			writeFile(t, run, "episode-2/agent7/agent7.history", rec("c1", "deploy the eighth")+rec("c3", "started earlier")+"  continued line\n")
			if _, err := ix.Refresh(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			ix.awaitMerges() // the merge runs after the update (merge.go)
			ix.mu.RLock()
			left := len(ix.state.MergeCandidates(ix.mergePolicy(), ix.mergesHeapOnly()))
			ix.mu.RUnlock()
			if merges.Load() == 0 || left != 0 {
				t.Errorf("the fresh index: %d merges made, %d segments left to merge; want some, none", merges.Load(), left)
			}
		}},
		{"write", "writing the cache entry", func(t *testing.T, ix *Index, run string, opts Options) {
			ix.cache.SetDelay(time.Millisecond)
			appendFile(t, run, "episode-1/agent0/agent0.history", rec("c1", "deploy once more"))
			if _, err := ix.Refresh(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				dropped := ix.cache.Dropped()
				ix.mu.RLock()
				indexed := len(ix.state.Files) == 7
				ix.mu.RUnlock()
				if dropped && indexed {
					break // dropped, and indexed afresh by the writer with no request
				}
				if time.Now().After(deadline) {
					t.Fatalf("the writer never faulted (dropped: %v)", dropped)
				}
			}
			ix.refreshMu.Lock() // its update done
			ix.refreshMu.Unlock()
		}},
	} {
		t.Run(tc.point, func(t *testing.T) {
			root := cacheRoot(t)
			run, opts := faultRun(t, root)
			core, logs := observer.New(zap.WarnLevel)
			opts.Logger = zap.New(core)
			opts.Cache = CacheOptions{Root: root}
			opts.cacheDelay = time.Hour // written at Close only, but in "write"
			ix := openTest(t, opts)
			if ix.cache == nil || ix.cache.Restored() == nil {
				t.Fatal("not restored")
			}
			var once sync.Once
			cut := false
			ix.cache.SetAfterCheck(func(point string) {
				if point == tc.point {
					once.Do(func() { must(t, ix.cache.CutFiles()); cut = true })
				}
			})
			tc.act(t, ix, run, opts)
			if !cut {
				t.Fatalf("the point %q was never reached", tc.point)
			}
			assertSameAnswers(t, ix, Options{Root: run, Masker: opts.Masker})
			warns := logs.FilterMessageSnippet("cut under the running server").All()
			if len(warns) != 1 || logs.Len() != 1 {
				t.Fatalf("want one WARN of the cut, got %v", logs.All())
			}
			if err := fmt.Sprint(warns[0].ContextMap()["error"]); !strings.Contains(err, tc.where) || !strings.Contains(err, "fault reading the mapping") {
				t.Errorf("the WARN's error %q is not a fault %s", err, tc.where)
			}
			must(t, ix.Close())

			core, logs = observer.New(zap.WarnLevel)
			again, restored := reopened(t, Options{Root: run, Masker: opts.Masker, Logger: zap.New(core)}, root)
			if !restored {
				t.Fatal("the entry was not written again")
			}
			assertSameAnswers(t, again, Options{Root: run, Masker: opts.Masker})
			if logs.Len() != 0 {
				t.Errorf("the next open warned: %v", logs.All())
			}
			must(t, again.Close())
		})
	}
}

// A fault inside a mapping of the index is the entry's corruption; one
// outside every mapping is a bug, not corruption: it goes on as a panic.
func TestFaultOutsideTheMappingPanics(t *testing.T) {
	root := cacheRoot(t)
	_, opts := faultRun(t, root)
	ix, restored := reopened(t, opts, root)
	if !restored {
		t.Fatal("not restored")
	}
	defer ix.Close()
	inside := uintptr(unsafe.Pointer(unsafe.SliceData(ix.cache.Restored().Blobs()[persist.BlobDict].Bytes())))
	if err := ix.cache.Guard().Run("testing", func() error { panic(addrError(inside)) }); !persist.IsFault(err) || !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("a fault inside the dictionary's mapping: %v", err)
	}
	defer func() {
		if r := recover(); r != addrError(0xdead000) {
			t.Fatalf("recovered %v, want the fault outside the mappings", r)
		}
	}()
	ix.cache.Guard().Run("testing", func() error { panic(addrError(0xdead000)) })
	t.Fatal("no panic")
}

type addrError uintptr

func (e addrError) Error() string { return "a fault" }
func (e addrError) Addr() uintptr { return uintptr(e) }
func (e addrError) RuntimeError() {}

// BenchmarkGuard: what guarding a call against a fault on a mapping costs
// (every request's answer and update pays it once).
func BenchmarkGuard(b *testing.B) {
	ix := openTest(b, Options{Root: b.TempDir()})
	n := 0
	for b.Loop() {
		ix.cache.Guard().Run("benchmark", func() error { n++; return nil })
	}
}

// sameRecords checks that ix's records of episode-1 are a fresh index's.
func sameRecords(t *testing.T, ix *Index, run string, opts Options) {
	t.Helper()
	req := RecordsRequest{Episode: "episode-1", Limit: 1000, Lines: true}
	got, err := ix.Records(context.Background(), req)
	must(t, err)
	fresh := openTest(t, Options{Root: run, Masker: opts.Masker})
	want, err := fresh.Records(context.Background(), req)
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the faulted records request:\n got %+v\nwant %+v", got, want)
	}
}
