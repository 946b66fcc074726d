package lsp_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"runls/internal/rungen"
	"runls/lsp"
	"runls/retriever"
)

// TestFreshAfterAppendReal (issue 13): through the server, 200 times in a
// row, a line with a new word is appended to another file of a generated run
// of many files and searched for at once with run/search: it is found every
// time. (bench/serve.sh does the same at full size, against the binary.)
func TestFreshAfterAppendReal(t *testing.T) {
	root := filepath.Join(t.TempDir(), "run")
	opts := rungen.Options{Bytes: 2 << 20, Seed: 3, Episodes: 4, Agents: 10, FilesPerAgent: 18, Workers: 2}
	if _, err := rungen.Generate(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	var files []string
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if err == nil && !d.IsDir() && strings.HasPrefix(rel, "episode-") && strings.Count(rel, string(filepath.Separator)) >= 2 {
			files = append(files, p)
		}
		return err
	}))
	slices.Sort(files)
	c := start(t, startOpts{})
	c.initialize(root, false, map[string]any{"episode": "episode-2", "conversation": "conv-1"})
	var res retriever.Result
	// run/search answers partially after retriever.PartialGrace while the run is
	// indexed (a loaded machine, -race): the appends are searched once it is done.
	c.waitIndexed()

	for i := range 200 {
		path := files[i*len(files)/200]
		word := fmt.Sprintf("fresh%dword", i)
		line := "noted " + word + "\n"
		switch filepath.Ext(path) {
		case ".history":
			line = "2026-10-30 09:00:00 [running] [conv-1] Alice noted " + word + "\n"
		case ".log":
			line = "2026-10-30 09:00:00.000 INFO  [running] [conv-1] Alice noted " + word + "\n"
		}
		appendLine(t, path, line)
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": word}, &res)
		real, err := filepath.EvalSymlinks(path)
		must(err)
		found := false
		for _, it := range res.Items {
			found = found || it.Location.URI == retriever.FileURI(real) && strings.Contains(it.Text, word)
		}
		if !found {
			t.Fatalf("append %d: %q appended to %s was not found by the run/search right after: %+v", i, word, path, res.Items)
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
