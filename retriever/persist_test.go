package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/store"
	"runls/masking"
	"runls/retriever/internal/persist"
)

// saveIndex commits ix's state into a new entry of root, as the cache's
// writer does.
func saveIndex(t testing.TB, ix *Index, opts Options, root *store.Root) {
	t.Helper()
	entry, err := root.Open(ix.root, cacheConfig(opts), store.Options{})
	must(t, err)
	must(t, persist.CommitTo(entry, ix.cacheHost()))
	must(t, entry.Close())
}

// reopened opens the run of opts with the cache of root and brings it up
// to date; restored says whether it started from the entry.
func reopened(t testing.TB, opts Options, root *store.Root) (ix *Index, restored bool) {
	t.Helper()
	opts.Cache = CacheOptions{Root: root}
	opts.cacheDelay = time.Hour // written at Close only
	opts.flushDocs = 1          // every segment flushed as it is made
	ix = openTest(t, opts)
	restored = ix.cache != nil && ix.cache.Restored() != nil
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix, restored
}

// assertSameAnswers checks that got answers as a fresh index of the same
// run and options: its pieces, statistics, searches, records, diagnostics
// and run/info.
func assertSameAnswers(t *testing.T, got *Index, opts Options) {
	t.Helper()
	opts.Root, opts.Cache, opts.Logger = got.Root(), CacheOptions{}, nil
	fresh := openTest(t, opts)
	ctx := context.Background()
	if _, err := fresh.Refresh(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if g, w := livePieces(t, got), livePieces(t, fresh); !slices.Equal(g, w) {
		t.Fatalf("reopened index's pieces differ from a fresh one's:\n reopened %q\n fresh    %q", g, w)
	}
	if g, w := checkStats(t, got), checkStats(t, fresh); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("statistics differ:\n reopened %v\n fresh    %v", g, w)
	}
	for _, q := range []string{"deploy", "apple note", "rotate token", "widepiece", "pending continued", "started earlier", "fresh"} {
		for _, req := range []Request{allEvidence(q), {Query: q, TopK: 5}} {
			g, w := searchResult(t, got, req), searchResult(t, fresh, req)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("search %+v:\n reopened %+v\n fresh    %+v", req, g, w)
			}
		}
	}
	for _, ep := range []string{"episode-1", "episode-2", "episode-3"} {
		gr, gerr := got.Records(ctx, RecordsRequest{Episode: ep, Limit: 1000, Lines: true})
		wr, werr := fresh.Records(ctx, RecordsRequest{Episode: ep, Limit: 1000, Lines: true})
		if !reflect.DeepEqual(gr, wr) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("records of %s:\n reopened %+v %v\n fresh    %+v %v", ep, gr, gerr, wr, werr)
		}
	}
	for _, f := range fresh.RecordFiles() {
		if g, w := got.Diagnostics(f, Uncapped), fresh.Diagnostics(f, Uncapped); !reflect.DeepEqual(g, w) {
			t.Fatalf("diagnostics of %s:\n reopened %+v\n fresh    %+v", f, g, w)
		}
	}
	gi, err := got.Info(ctx)
	must(t, err)
	wi, err := fresh.Info(ctx)
	must(t, err)
	if !reflect.DeepEqual(gi, wi) {
		t.Fatalf("info:\n reopened %+v\n fresh    %+v", gi, wi)
	}
}

// setBack gives a file the modification time it had.
func setBack(t *testing.T, root, rel string, info os.FileInfo) {
	t.Helper()
	must(t, os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), info.ModTime(), info.ModTime()))
}

// Answers after a reopen are a fresh index's, for each change made while
// the run was closed (spec §15); a file not changed is not read again.
func TestReopenEqualsFresh(t *testing.T) {
	hist := "episode-1/alice/alice.history"
	cases := []struct {
		name   string
		change func(t *testing.T, run string)
		reads  bool // the reopen reads some content
	}{
		{"unchanged", func(*testing.T, string) {}, false},
		{"grown", func(t *testing.T, run string) {
			appendFile(t, run, hist, "  continued after reopen\n"+rec("c4", "fresh deploy"))
			appendFile(t, run, "episode-1/alice/notes.txt", "apple note fresh\n")
		}, true},
		{"shrunk", func(t *testing.T, run string) {
			must(t, os.Truncate(filepath.Join(run, "episode-1/alice/alice.history"), 40))
		}, true},
		{"rewritten in place, same size and time", func(t *testing.T, run string) {
			p := filepath.Join(run, "episode-2/bob/notes.md")
			info, err := os.Stat(p)
			must(t, err)
			data, err := os.ReadFile(p)
			must(t, err)
			mid := len(data) / 2
			copy(data[mid:], "FRESH")
			must(t, os.WriteFile(p, data, 0o644))
			setBack(t, run, "episode-2/bob/notes.md", info)
		}, true},
		{"replaced by another file", func(t *testing.T, run string) {
			p := filepath.Join(run, hist)
			must(t, os.Remove(p))
			writeFile(t, run, hist, rec("c9", "fresh history")+rec("c9", "deploy again"))
		}, true},
		{"deleted", func(t *testing.T, run string) {
			must(t, os.Remove(filepath.Join(run, "episode-1/alice/alice.log")))
		}, false},
		{"episode added", func(t *testing.T, run string) {
			writeFile(t, run, "episode-3/carol/carol.history", rec("c5", "fresh episode deploy"))
			must(t, os.MkdirAll(filepath.Join(run, "episode-4"), 0o755))
		}, true},
		{"binary became text", func(t *testing.T, run string) {
			writeFile(t, run, "episode-2/bob/blob.bin", "now a fresh text\n")
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, run := codecRun(t)
			opts := Options{Root: run, Masker: masking.HidingOutside(run)}
			root := cacheRoot(t)
			first, _ := reopened(t, opts, root)
			must(t, first.Close())
			// Out of the racy window of the reads: else the reopen checks
			// every file's content, and unchanged files are read.
			past := time.Now().Add(-time.Minute)
			filepath.Walk(run, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					os.Chtimes(p, past, past)
				}
				return nil
			})
			second, _ := reopened(t, opts, root)
			must(t, second.Close())

			tc.change(t, run)
			ix, restored := reopened(t, opts, root)
			if !restored {
				t.Fatal("the reopen did not restore the entry")
			}
			if content, _ := ix.BytesRead(); (content > 0) != tc.reads {
				t.Errorf("the reopen read %d bytes of content", content)
			}
			assertSameAnswers(t, ix, opts)
		})
	}
}

// Another masking or interpreter setting never restores the entry of
// another: the text it holds is another's.
func TestReopenOtherSettingIsAnotherEntry(t *testing.T) {
	_, run := codecRun(t)
	rules, err := ParseInterpreter([]byte(`{"rules": [{"match": "deploy", "reading": "told"}]}`))
	must(t, err)
	root := cacheRoot(t)
	for _, opts := range []Options{{Root: run}, {Root: run, Masker: masking.HidingOutside(run)}, {Root: run, Interpreter: rules}} {
		ix, restored := reopened(t, opts, root)
		if restored {
			t.Errorf("masking %v, interpreter %v: restored another setting's entry", opts.Masker != nil, opts.Interpreter != nil)
		}
		must(t, ix.Close())
	}
	for _, opts := range []Options{{Root: run}, {Root: run, Masker: masking.HidingOutside(run)}, {Root: run, Interpreter: rules}} {
		ix, restored := reopened(t, opts, root)
		if !restored {
			t.Errorf("masking %v, interpreter %v: its own entry not restored", opts.Masker != nil, opts.Interpreter != nil)
		}
		assertSameAnswers(t, ix, opts)
	}
}

// A blob's file cut under the running index (someone truncated it; a read
// of its mapping past the cut would fault): the next search finds it
// before reading the mapping, drops what was restored with one WARN and
// answers from the run indexed afresh; the entry is written again whole.
func TestReopenBlobCutUnderTheIndex(t *testing.T) {
	_, run := codecRun(t)
	root := cacheRoot(t)
	opts := Options{Root: run, Masker: masking.HidingOutside(run)}
	first, _ := reopened(t, opts, root)
	must(t, first.Close())

	core, logs := observer.New(zap.WarnLevel)
	opts.Logger = zap.New(core)
	ix, restored := reopened(t, opts, root)
	if !restored {
		t.Fatal("not restored")
	}
	var biggest string
	var size int64
	for _, b := range ix.cache.Restored().Blobs() {
		if b.Ref().Length > size {
			biggest, size = b.Ref().Name, b.Ref().Length
		}
	}
	must(t, os.Truncate(filepath.Join(ix.cache.Entry().Dir(), biggest), 100))
	search(t, ix, allEvidence("deploy"))
	assertSameAnswers(t, ix, Options{Root: run, Masker: opts.Masker})
	if n := logs.FilterMessageSnippet("cut under the running server").Len(); n != 1 {
		t.Errorf("%d WARNs of the cut, want 1: %v", n, logs.All())
	}
	must(t, ix.Close())
	again, restored := reopened(t, Options{Root: run, Masker: opts.Masker}, root)
	if !restored {
		t.Fatal("the entry was not written again")
	}
	assertSameAnswers(t, again, Options{Root: run, Masker: opts.Masker})
}
