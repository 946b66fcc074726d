package retriever

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/persist"
)

// blobContentAt is where a blob's content starts in its file: after the
// header, at a 64-byte boundary (internal/store/blob.go).
const blobContentAt = 64

// A reopened index's segment blobs corrupted after the open and before a
// search first reads them (a byte flipped in every chunk that nothing has
// checked yet, in every segment blob; the entry is opened checking its
// structure only, issue 33): the search answers as a fresh index, one WARN
// says the entry was dropped, nothing crashes, and the next open restores
// a clean entry that answers as a fresh index.
func TestReopenBlobCorruptedBeforeFirstUse(t *testing.T) {
	var notes strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&notes, "a long note %d about the deploy of shard %d\n", i, i%977)
	}
	run := writeRun(t, map[string]string{
		"episode-1/agent0/notes.txt":      notes.String(),
		"episode-2/agent1/agent1.history": rec("c1", "deploy the app") + rec("c2", "rotate the shard token"),
	})
	root := cacheRoot(t)
	first, _ := reopened(t, Options{Root: run}, root)
	must(t, first.Close())

	core, logs := observer.New(zap.WarnLevel)
	ix, restored := reopened(t, Options{Root: run, Logger: zap.New(core)}, root)
	if !restored {
		t.Fatal("not restored")
	}
	flipped := 0
	for _, b := range ix.cache.Restored().Blobs()[persist.BlobSegments:] {
		f, err := os.OpenFile(filepath.Join(ix.cache.Entry().Dir(), b.Ref().Name), os.O_WRONLY, 0)
		must(t, err)
		for off := int64(0); off < b.Ref().Length; off += store.ChunkSize {
			n := min(store.ChunkSize, b.Ref().Length-off)
			if b.Checked(off, n) {
				continue // read already: what a later change does to it is not this test's
			}
			at := off + n/2
			_, err := f.WriteAt([]byte{b.Bytes()[at] ^ 0x5a}, blobContentAt+at)
			must(t, err)
			flipped++
		}
		must(t, f.Close())
	}
	if flipped == 0 {
		t.Fatal("the open checked every chunk: the test means some it did not")
	}
	got := searchResult(t, ix, allEvidence("deploy shard"))
	want := searchResult(t, openTest(t, Options{Root: run}), allEvidence("deploy shard"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the search over the corrupted entry:\n got %+v\nwant %+v", got, want)
	}
	if !ix.cache.Dropped() {
		t.Error("the entry was not dropped")
	}
	if n := logs.FilterMessageSnippet("not as written").Len(); n != 1 || logs.Len() != 1 {
		t.Errorf("%d WARNs of the corruption, want 1 and nothing else: %v", n, logs.All())
	}
	assertSameAnswers(t, ix, Options{Root: run})
	must(t, ix.Close())
	again, restored := reopened(t, Options{Root: run}, root)
	if !restored {
		t.Fatal("the entry was not written again")
	}
	assertSameAnswers(t, again, Options{Root: run})
}

// The file states made of a state blob keep copies of what they hold, not
// the blob's bytes: the reopen decodes the state from its mapping and then
// lets the mapping's pages go (internal/persist/persist.go), and a request
// reads the files' states with no guard against a fault. Bytes scribbled
// over once FileStates is done change no file state.
func TestFileStatesKeepNoBlobBytes(t *testing.T) {
	ix, _ := codecRun(t)
	ix.mu.RLock()
	st, place := persist.Save(&ix.state)
	state := persist.EncodeState(nil, st, place)
	segs := slices.Clone(ix.state.Segments)
	terms := ix.state.Dict.Len()
	ix.mu.RUnlock()
	decode := func(b []byte) []*corpus.File {
		blob, err := persist.DecodeState(b)
		must(t, err)
		files, err := blob.FileStates(segs, terms, fileRules())
		must(t, err)
		return files
	}
	scribbled := slices.Clone(state)
	got := decode(scribbled)
	for i := range scribbled {
		scribbled[i] ^= 0xa5
	}
	if want := decode(slices.Clone(state)); !reflect.DeepEqual(got, want) {
		t.Error("a file state changed with the bytes it was decoded from")
	}
	if len(got) == 0 || got[0].Table() == nil && len(got[0].LineIndex) == 0 && len(got[len(got)-1].LineIndex) == 0 {
		t.Fatal("the run's files hold nothing to compare")
	}
}
