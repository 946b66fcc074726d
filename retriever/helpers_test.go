package retriever

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// writeRun writes files (slash paths relative to a new run folder) and returns the folder.
func writeRun(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func openTest(t testing.TB, opts Options) *Index {
	t.Helper()
	ix, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func search(t testing.TB, ix *Index, req Request) []Item {
	t.Helper()
	return searchResult(t, ix, req).Items
}

// searchResult is the whole result of req (hidden and notices with the items).
func searchResult(t testing.TB, ix *Index, req Request) Result {
	t.Helper()
	res, err := ix.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %+v: %v", req, err)
	}
	return res
}

func texts(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Text
	}
	return out
}

func sortedTexts(items []Item) []string {
	out := texts(items)
	slices.Sort(out)
	return out
}
