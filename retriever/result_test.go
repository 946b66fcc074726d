package retriever

import (
	"path/filepath"
	"strconv"
	"testing"

	"runls/retriever/internal/runfs"
)

// awkwardNames are file paths whose URI escapes something: a space, "%",
// "#", "?", ":", "@", non-ASCII letters and a symbol outside the BMP.
var awkwardNames = []string{
	"episode-1/a b/notes.md", "episode-1/100%/x.md", "episode-1/c#/x#y.md", "episode-1/q/why?.md",
	"episode-1/c:d@e/x.md", "episode-1/Café/naïve.md", "episode-1/emoji/😀.md", "episode-1/plain/notes.md",
}

// fileNames gives what runfs.Abs and FileURI make of a file, for awkward
// names, from the cache, and after the cache was emptied when full.
func TestFileNamesEqualPlain(t *testing.T) {
	root := "/run folder/ü"
	var c fileNames
	check := func(rel string) {
		t.Helper()
		path := runfs.Abs(root, rel)
		if got := c.of(root, rel); got.path != path || got.uri != FileURI(path) {
			t.Fatalf("%q: %q %q, want %q %q", rel, got.path, got.uri, path, FileURI(path))
		}
	}
	for range 2 {
		for _, rel := range awkwardNames {
			check(rel)
		}
	}
	for i := range maxFileNames + 10 {
		check("episode-2/f" + strconv.Itoa(i) + ".md")
		check(awkwardNames[i%len(awkwardNames)])
	}
	if n := c.n.Load(); n > maxFileNames {
		t.Errorf("%d names kept, more than %d", n, maxFileNames)
	}
}

// A search's items carry their file's path and its URI as FileURI makes
// it, for awkward names, asked twice (the second from the cache).
func TestItemsPathAndURI(t *testing.T) {
	files := map[string]string{}
	for _, rel := range awkwardNames {
		files[rel] = "bravolima in " + rel + "\n"
	}
	root := writeRun(t, files)
	ix := openTest(t, Options{Root: root})
	for range 2 {
		items := search(t, ix, allEvidence("bravolima"))
		if len(items) != len(awkwardNames) {
			t.Fatalf("%d items, want %d", len(items), len(awkwardNames))
		}
		for _, it := range items {
			path := filepath.Join(ix.Root(), filepath.FromSlash(it.File))
			if it.Path != path || it.Location.URI != FileURI(path) || it.Text != "bravolima in "+it.File {
				t.Errorf("item of %q: path %q, URI %q, text %q; want %q, %q", it.File, it.Path, it.Location.URI, it.Text, path, FileURI(path))
			}
		}
	}
}
