package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

func docParams(path string) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": retriever.FileURI(path)}}
}

func hoverParams(path string, line int) map[string]any {
	p := docParams(path)
	p["position"] = map[string]any{"line": line, "character": 3}
	return p
}

// TestRecordRequestsReal: documentSymbol, foldingRange and hover on the real
// engine answer what the engine answers, for files the editor never opened;
// plain files and files outside the run get [] and null; the wire form is
// kept in golden files (go test -run RecordRequestsReal -update).
func TestRecordRequestsReal(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	settings := map[string]any{"episode": "episode-2", "conversation": "conv-1"}
	c.initialize(root, false, settings)
	ix := openIndex(t, retriever.Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	req := retriever.Request{Episode: "episode-2", Conversation: "conv-1"}

	for _, rel := range []string{"episode-2/bob/bob.log", "episode-2/alice/alice.history", "episode-1/alice/alice.log"} {
		path := filepath.Join(root, rel)
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &syms)
		want, err := ix.Outline(context.Background(), path, lsp.MaxOutlineRecords)
		if err != nil {
			t.Fatal(err)
		}
		if len(syms) != len(want.Runs) {
			t.Fatalf("%s: %d top-level symbols, the engine has %d runs", rel, len(syms), len(want.Runs))
		}
		for i, run := range want.Runs {
			s := syms[i]
			name := "(no conversation field)"
			if run.Conversation != nil {
				name = *run.Conversation
			}
			if s.Name != name || s.Kind != protocol.SymbolKindNamespace || len(s.Children) != len(run.Records) ||
				canonical(t, s.Range) != canonical(t, run.Range) {
				t.Errorf("%s run %d: %s, engine %s", rel, i, canonical(t, s), canonical(t, run))
			}
			for j, r := range run.Records {
				ch := s.Children[j]
				if ch.Name != r.Name || ch.Detail != r.Detail || ch.Kind != protocol.SymbolKindEvent ||
					canonical(t, ch.Range) != canonical(t, r.Range) || canonical(t, ch.SelectionRange) != canonical(t, r.Selection) {
					t.Errorf("%s record %d.%d: %s, engine %s", rel, i, j, canonical(t, ch), canonical(t, r))
				}
			}
		}
		var folds []protocol.FoldingRange
		c.mustCall(protocol.MethodTextDocumentFoldingRange, docParams(path), &folds)
		wantFolds := ix.Folds(path)
		if len(folds) != len(wantFolds) {
			t.Fatalf("%s: %d folds, engine %d", rel, len(folds), len(wantFolds))
		}
		for i, f := range wantFolds {
			if int(folds[i].StartLine) != f.StartLine || int(folds[i].EndLine) != f.EndLine {
				t.Errorf("%s fold %d: %+v, engine %+v", rel, i, folds[i], f)
			}
		}
		var report strings.Builder
		fmt.Fprintf(&report, "documentSymbol:\n%s\nfoldingRange: %s\n", indent(t, syms), mustJSON(folds))
		lines := strings.Count(readFile(t, path), "\n")
		for line := 0; line < lines; line++ {
			var h *protocol.Hover
			c.mustCall(protocol.MethodTextDocumentHover, hoverParams(path, line), &h)
			facts, err := ix.RecordAt(context.Background(), path, line, req)
			if err != nil {
				t.Fatal(err)
			}
			if (h == nil) != (facts == nil) {
				t.Fatalf("%s:%d: hover %v, engine facts %v", rel, line, h, facts)
			}
			if h == nil {
				continue
			}
			evidence := "evidence: yes"
			if !facts.Evidence {
				evidence = "evidence: no (" + facts.Reason + ")"
			}
			if h.Contents.Kind != protocol.Markdown || !strings.Contains(h.Contents.Value, "  \n"+evidence+"  \n") && !strings.HasSuffix(h.Contents.Value, "  \n"+evidence) ||
				canonical(t, h.Range) != canonical(t, facts.Range) {
				t.Errorf("%s:%d: hover %s lacks the line %q or the record's range %s", rel, line, canonical(t, h), evidence, canonical(t, facts.Range))
			}
			fmt.Fprintf(&report, "hover %d: %s\n%s\n", line, mustJSON(h.Range), h.Contents.Value)
		}
		golden(t, "records/"+strings.ReplaceAll(rel, "/", "-")+".txt", []byte(report.String()))
	}

	// A plain file, a file outside the run, a file that does not exist.
	for _, path := range []string{filepath.Join(root, "episode-2/alice/notes.md"), "/etc/passwd", filepath.Join(root, "episode-2/bob/none.log")} {
		var syms []protocol.DocumentSymbol
		var folds []protocol.FoldingRange
		var h *protocol.Hover
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &syms)
		c.mustCall(protocol.MethodTextDocumentFoldingRange, docParams(path), &folds)
		c.mustCall(protocol.MethodTextDocumentHover, hoverParams(path, 0), &h)
		if syms == nil || len(syms) != 0 || folds == nil || len(folds) != 0 || h != nil {
			t.Errorf("%s: symbols %v, folds %v, hover %v; want [], [], null", path, syms, folds, h)
		}
	}

	// Hover follows the settings: another conversation of the current episode.
	bob := filepath.Join(root, "episode-2/bob/bob.log")
	hoverText := func() string {
		var h *protocol.Hover
		c.mustCall(protocol.MethodTextDocumentHover, hoverParams(bob, 4), &h)
		return h.Contents.Value
	}
	if got := hoverText(); !strings.Contains(got, "evidence: yes") || !strings.Contains(got, "conversation `conv-1`") {
		t.Errorf("hover on bob.log:5 with conv-1: %q", got)
	}
	changeSettings(c, map[string]any{"episode": "episode-2", "conversation": "conv-2"})
	deadline := time.Now().Add(waitTimeout)
	for !strings.Contains(hoverText(), "evidence: no (other-conversation)") {
		if time.Now().After(deadline) {
			t.Fatalf("hover after the change to conv-2: %q", hoverText())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A record that grows on disk is outlined whole, without the editor's text.
	appendLine(t, bob, "2026-10-21 18:20:00.000 ERROR [running] [conv-3] Bob failed once more\n\tat com.example.A.b(A.java:1)\n")
	deadline = time.Now().Add(waitTimeout)
	for {
		var syms []protocol.DocumentSymbol
		c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(bob), &syms)
		last := syms[len(syms)-1]
		if last.Name == "conv-3" && len(last.Children) == 1 && last.Children[0].Range.End.Line == 11 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the appended record is not in the outline: %s", canonical(t, last))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestOutlineLimit: a record file of more records than the outline lists
// gets the first MaxOutlineRecords and one symbol saying how many more.
func TestOutlineLimit(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "episode-1", "a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	n := lsp.MaxOutlineRecords + 7
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "2026-10-21 18:%02d:%02d [s] [conv-%d] A record %d\n", i/60%60, i%60, i/100, i)
	}
	path := filepath.Join(dir, "a.history")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	var syms []protocol.DocumentSymbol
	c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &syms)
	listed := 0
	for _, s := range syms[:len(syms)-1] {
		listed += len(s.Children)
	}
	last := syms[len(syms)-1]
	if listed != lsp.MaxOutlineRecords || last.Name != fmt.Sprintf("… 7 more records (the outline lists the first %d)", lsp.MaxOutlineRecords) ||
		last.Range.Start.Line != uint32(lsp.MaxOutlineRecords) || last.Range.End.Line != uint32(n-1) {
		t.Errorf("%d records listed, last symbol %s", listed, canonical(t, last))
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func indent(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
