package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"runls/retriever"
)

func TestProgressLine(t *testing.T) {
	got := progressLine(retriever.Progress{FilesDone: 3, FilesTotal: 8, BytesDone: 40 << 20, BytesTotal: 100 << 20})
	if got != "runls: indexing the run: 40% (3 of 8 files, 40 of 100 MB)" {
		t.Errorf("got %q", got)
	}
}

// TestProgressOnlyOnATerminal: stderr that is no terminal gets no progress
// line (the CLI tests compare stderr whole); on a terminal (script(1) gives
// the process a pseudo-terminal) a long first indexing shows one, cleared
// at the end.
func TestProgressOnlyOnATerminal(t *testing.T) {
	var errb bytes.Buffer
	ix := openRun(t, filepath.Join(testdata(t), "sample-run"))
	if err := indexWithProgress(t.Context(), ix, &errb); err != nil || errb.Len() != 0 {
		t.Errorf("not a terminal: %v, stderr %q", err, errb.String())
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is missing: no pseudo-terminal to test with")
	}
	bin := filepath.Join(t.TempDir(), "runls")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	run := t.TempDir()
	var sb strings.Builder
	for i := 0; i < 400000; i++ {
		sb.WriteString("2026-10-21 18:00:00 INFO  [running] [conv-1] A words to index a while\n")
	}
	write(t, filepath.Join(run, "episode-1/a/a.log"), sb.String())
	out, _ := exec.Command(script, "-qc", bin+" search --no-cache "+run+" words > /dev/null", "/dev/null").CombinedOutput()
	text := string(out)
	i := strings.LastIndex(text, "runls: indexing the run: ")
	if i < 0 {
		t.Skipf("the indexing took under %v: no progress shown (%q)", progressAfter, text)
	}
	// The last progress line is cleared before anything else is written.
	if rest := text[i:]; !strings.Contains(rest, "\r\033[K") || strings.Contains(rest[:strings.Index(rest, "\r\033[K")], "\n") {
		t.Errorf("the progress line is not cleared: %q", text)
	}
}

func openRun(t *testing.T, root string) *retriever.Index {
	t.Helper()
	ix, err := retriever.Open(t.Context(), retriever.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}
