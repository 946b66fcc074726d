package retriever

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
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
