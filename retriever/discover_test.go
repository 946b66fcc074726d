package retriever

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/retriever/internal/runfs"
)

func TestDiscoveryRules(t *testing.T) {
	outside := writeRun(t, map[string]string{"secret.txt": "fig outside\n", "dir/x.txt": "fig outside dir\n"})
	root := writeRun(t, map[string]string{
		"episode-1/a/notes.txt":     "fig note\n",
		"episode-1/a/deep/er/x.md":  "fig deep\n",
		"episode-1/a/binary.dat":    "fig\x00binary\n",
		"episode-1/a/late-nul.txt":  strings.Repeat("x", BinarySniffBytes-1) + "\n\x00 fig late nul\n",
		"episode-1/a/invalid.txt":   "fig \xff\xfe invalid\n",
		"episode-1/a/crlf.txt":      "fig crlf\r\nfig two\r\n",
		"episode-1/a/nolineend.txt": "fig last",
		"episode-1/fig.txt":         "fig episode folder\n",
		"fig.txt":                   "fig run folder\n",
		"episodes-1/a/notes.txt":    "fig wrong folder\n",
		"episode-1/a/.hidden/h.txt": "fig hidden\n",
	})
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "episode-1/a/out-link.txt")))
	must(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "episode-1/a/out-dir")))
	must(t, os.Symlink(filepath.Join(root, "episode-1/a/notes.txt"), filepath.Join(root, "episode-1/a/in-link.txt")))
	must(t, os.Symlink("loop2", filepath.Join(root, "episode-1/a/loop1")))
	must(t, os.Symlink("loop1", filepath.Join(root, "episode-1/a/loop2")))
	must(t, os.Symlink(outside, filepath.Join(root, "episode-1/b")))

	// The run folder is taken by its real path: open it through a link.
	link := filepath.Join(t.TempDir(), "run-link")
	must(t, os.Symlink(root, link))
	core, logs := observer.New(zap.WarnLevel)
	ix := openTest(t, Options{Root: link, Logger: zap.New(core)})
	for range 2 {
		got := sortedTexts(search(t, ix, Request{Query: "fig", TopK: 100}))
		want := slices.Sorted(slices.Values([]string{"fig \uFFFD\uFFFD invalid", "fig crlf", "fig deep", "fig hidden", "fig last", "\x00 fig late nul", "fig note", "fig two"}))
		if !slices.Equal(got, want) {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	}
	var warned []string
	for _, e := range logs.All() {
		warned = append(warned, e.ContextMap()["link"].(string))
	}
	slices.Sort(warned)
	if !slices.Equal(warned, []string{"episode-1/a/out-dir", "episode-1/a/out-link.txt", "episode-1/b"}) {
		t.Fatalf("WARNs: %v", logs.All())
	}
	info, _ := ix.Info(context.Background())
	if info.Indexing.Files != 7 || !info.Indexing.Done {
		t.Errorf("info indexing %+v, want 7 files", info.Indexing)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(writeRun(t, map[string]string{"f": "x"}), "f")
	for _, root := range []string{"", filepath.Join(t.TempDir(), "missing"), file} {
		if _, err := Open(context.Background(), Options{Root: root}); err == nil {
			t.Errorf("Open(%q): no error", root)
		}
	}
}

func TestRunInfo(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-10/bob/b.log":      "2026-10-21 18:00:00 DEBUG [s] [z-conv] bob x\n",
		"episode-2/alice/a.history": "2026-10-21 18:00:00 [s] [c2] alice x\n2026-10-21 18:00:00 [s] [-] alice y\n2026-10-21 18:00:00 [s] [c1] alice y\n",
		"episode-2/bob/notes.txt":   "2026-10-21 18:00:00 [s] [not-a-conv] bob x\n",
		"episode-3/.keep-not-agent": "",
	})})
	must(t, os.MkdirAll(filepath.Join(ix.Root(), "episode-1"), 0o755))
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	info, err := ix.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Root, "file:///") || !slices.Equal(info.Agents, []string{"alice", "bob"}) {
		t.Fatalf("info %+v", info)
	}
	var eps []string
	for _, e := range info.Episodes {
		eps = append(eps, e.Episode+":"+strings.Join(e.Agents, ",")+":"+strings.Join(e.Conversations, ","))
	}
	want := []string{"episode-1::", "episode-2:alice,bob:c1,c2", "episode-3::", "episode-10:bob:z-conv"}
	if !slices.Equal(eps, want) {
		t.Fatalf("episodes %q, want %q", eps, want)
	}
}

func TestFileURI(t *testing.T) {
	for path, want := range map[string]string{
		"/run/episode-1/a b/x.log": "file:///run/episode-1/a%20b/x.log",
		"/run/c:d@e/x#y?.log":      "file:///run/c%3Ad%40e/x%23y%3F.log",
		"/run/Café/😀.md":           "file:///run/Caf%C3%A9/%F0%9F%98%80.md",
	} {
		if got := FileURI(path); got != want {
			t.Errorf("FileURI(%q) = %q, want %q", path, got, want)
		}
		if back := PathOfURI(want); back != path {
			t.Errorf("PathOfURI(%q) = %q", want, back)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWalkSkipsUnchangedFolders: with a watcher running, a search lists no
// folder and stats no file that did not change, yet finds a file created just
// before it.
func TestWalkSkipsUnchangedFolders(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-2/b/b.txt": "apple bee\n"})
	opts := Options{Root: root}
	ix := openTest(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- ix.Watch(ctx, nil) }()
	defer func() { cancel(); <-stopped }()
	waitWatched(t, ix, 5)
	waitFor(t, "a search that lists no folder and stats no file", func() bool {
		listings, stats := ix.fw.Listings.Load(), ix.fw.Stats.Load()
		search(t, ix, allEvidence("apple"))
		return ix.fw.Listings.Load() == listings && ix.fw.Stats.Load() == stats
	})
	writeFile(t, root, "episode-2/b/new.txt", "apple new\n")
	search(t, ix, allEvidence("apple"))
	if got := livePieces(t, ix); !slices.Contains(got, "episode-2/b/new.txt:0:0 note apple new") {
		t.Fatalf("a file created before the search was not found: %q", got)
	}
	appendFile(t, root, note, "apple two\n")
	assertFollowed(t, ix, opts, []string{note + ":0:0 note apple one", note + ":1:0 note apple two",
		"episode-2/b/b.txt:0:0 note apple bee", "episode-2/b/new.txt:0:0 note apple new"})
}

// waitWatched waits until a running Watch watches n folders and has polled
// each of them since its watch began, so that an update trusts events alone.
func waitWatched(t testing.TB, ix *Index, n int) {
	t.Helper()
	waitFor(t, "every folder watched", func() bool {
		_, watched, polled, bar := ix.fw.Counts()
		ready := watched == n && polled == 0 && bar
		if ready {
			ix.refreshMu.Lock() // the update that watched the last of them has ended
			ix.refreshMu.Unlock()
		}
		return ready
	})
}

// TestWalkWithoutEvents: without a watcher (the command line, or events
// off), a search still finds every change made before it, by the stat of
// each folder and file; it lists only the folders whose time changed.
func TestWalkWithoutEvents(t *testing.T) {
	root := writeRun(t, map[string]string{note: "apple one\n", "episode-1/a/x.txt": "apple x\n", "episode-2/b/b.txt": "apple bee\n"})
	backdate := func() {
		old := time.Now().Add(-time.Hour)
		must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = os.Chtimes(p, old, old)
			}
			return err
		}))
	}
	backdate()
	opts := Options{Root: root}
	ix := openTest(t, opts)
	assertFollowed(t, ix, opts, nil)
	search(t, ix, allEvidence("apple")) // lists the folders listed within runfs.RacyWindow once more
	steps := []struct {
		name   string
		change func()
		listed int64 // folders listed by the search after the change
		want   []string
	}{
		{"nothing", func() {}, 0, []string{note + ":0:0 note apple one", "episode-1/a/x.txt:0:0 note apple x", "episode-2/b/b.txt:0:0 note apple bee"}},
		{"append", func() { appendFile(t, root, note, "apple two\n") }, 0,
			[]string{note + ":0:0 note apple one", note + ":1:0 note apple two", "episode-1/a/x.txt:0:0 note apple x", "episode-2/b/b.txt:0:0 note apple bee"}},
		{"new file", func() { writeFile(t, root, "episode-2/b/new.txt", "apple new\n") }, 1,
			[]string{note + ":0:0 note apple one", note + ":1:0 note apple two", "episode-1/a/x.txt:0:0 note apple x", "episode-2/b/b.txt:0:0 note apple bee", "episode-2/b/new.txt:0:0 note apple new"}},
		{"deleted file", func() { must(t, os.Remove(filepath.Join(root, "episode-1/a/x.txt"))) }, 1,
			[]string{note + ":0:0 note apple one", note + ":1:0 note apple two", "episode-2/b/b.txt:0:0 note apple bee", "episode-2/b/new.txt:0:0 note apple new"}},
		{"new agent and episode", func() {
			writeFile(t, root, "episode-2/c/c.txt", "apple sea\n")
			writeFile(t, root, "episode-3/d/sub/d.txt", "apple dee\n")
		}, 2 + 4, // the root and episode-2, then episode-2/c, episode-3, episode-3/d and its sub
			[]string{note + ":0:0 note apple one", note + ":1:0 note apple two", "episode-2/b/b.txt:0:0 note apple bee", "episode-2/b/new.txt:0:0 note apple new",
				"episode-2/c/c.txt:0:0 note apple sea", "episode-3/d/sub/d.txt:0:0 note apple dee"}},
	}
	for _, s := range steps {
		s.change()
		before := ix.fw.Listings.Load()
		assertFollowed(t, ix, opts, s.want)
		if got := ix.fw.Listings.Load() - before; got != s.listed {
			t.Fatalf("%s: the search listed %d folders, want %d", s.name, got, s.listed)
		}
		backdate()
		search(t, ix, allEvidence("apple")) // lists the backdated folders once more
	}
}

// splitFolders gives planFound's goroutines runs of folders: every folder
// once and in order, at most n runs and no more than files/least, none
// empty, of about equal numbers of files.
func TestSplitFolders(t *testing.T) {
	folder := func(n int) []runfs.Candidate { return make([]runfs.Candidate, n) }
	for _, tc := range []struct {
		sizes     []int
		n, least  int
		wantParts int
	}{
		{nil, 2, 1, 1},
		{[]int{3}, 2, 1, 1},
		{[]int{1, 1}, 2, 1, 2},
		{[]int{1, 1}, 2, 4096, 1},
		{[]int{5, 5, 5, 5}, 2, 1, 2},
		{[]int{5, 5, 5, 5}, 8, 1, 4},
		{[]int{100, 1, 1, 1, 1}, 2, 1, 2},
		{[]int{40, 35, 35, 40, 100, 1, 0, 7}, 3, 10, 3},
		{[]int{0, 0, 9, 0}, 2, 1, 1},
		{[]int{6, 0, 0}, 2, 1, 1},
	} {
		var folders [][]runfs.Candidate
		files := 0
		for _, n := range tc.sizes {
			folders = append(folders, folder(n))
			files += n
		}
		parts := splitFolders(folders, tc.n, tc.least)
		if len(parts) != tc.wantParts {
			t.Errorf("%v in %d of %d: %d parts, want %d", tc.sizes, tc.n, tc.least, len(parts), tc.wantParts)
		}
		var again [][]runfs.Candidate
		for _, p := range parts {
			got := 0
			for _, f := range p {
				got += len(f)
			}
			if len(parts) > 1 && (got == 0 || got > 2*files/len(parts)) {
				t.Errorf("%v in %d of %d: a part of %d files", tc.sizes, tc.n, tc.least, got)
			}
			again = append(again, p...)
		}
		if len(again) != len(folders) {
			t.Fatalf("%v: %d folders in the parts, want %d", tc.sizes, len(again), len(folders))
		}
		for i := range folders {
			if len(folders[i]) > 0 && &again[i][0] != &folders[i][0] {
				t.Errorf("%v: folder %d out of order", tc.sizes, i)
			}
		}
	}
}

// TestWalkManyEpisodes: a full walk holds at most runfs' limit of episode
// folders open for their agents' walk and opens the others' agents by
// path: every file of a run of more episodes than that is found, once.
func TestWalkManyEpisodes(t *testing.T) {
	const episodes = 300 // over the walk's 256 held
	files := map[string]string{}
	var want []string
	for i := 1; i <= episodes; i++ {
		rel := fmt.Sprintf("episode-%d/a%d/notes.txt", i, i%7)
		files[rel] = fmt.Sprintf("apple %d\n", i)
		want = append(want, fmt.Sprintf("%s:0:0 note apple %d", rel, i))
	}
	ix := openTest(t, Options{Root: writeRun(t, files)})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	if got := livePieces(t, ix); !slices.Equal(got, want) {
		t.Fatalf("%d pieces, want %d:\n got %q", len(got), len(want), got)
	}
}
