package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"runls/lsp"
)

// TestUnfieldedWarningOncePerFile: a search whose current episode holds a
// record file with a line without the conversation field sends the WARN of
// spec §5 rule 4 as window/logMessage (spec §9), naming the file, even when
// the query matches nothing of that line; once per file, however many
// searches follow.
func TestUnfieldedWarningOncePerFile(t *testing.T) {
	root := sampleRun(t)
	history := filepath.Join(root, "episode-2", "alice", "alice.history")
	f, err := os.OpenFile(history, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("2026-10-21 18:09:00 [running] Alice was told: the budget is tight\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	warned := func(n note) bool {
		return n.method == protocol.MethodWindowLogMessage && strings.Contains(string(n.params), "episode-2/alice/alice.history")
	}
	// Another episode as the current one: the line is evidence there, no WARN.
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy", "episode": "episode-3", "conversation": "conv-1"}, nil)
	for range 3 {
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "deploy", "episode": "episode-2", "conversation": "conv-1"}, nil)
	}
	c.waitFor("a logMessage naming episode-2/alice/alice.history", warned)
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "tight budget", "episode": "episode-2", "conversation": "conv-1"}, nil)
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
	if n := len(c.sent(warned)); n != 1 {
		t.Errorf("%d logMessages name the file, want 1:\n%s", n, c.methods())
	}
	for _, n := range c.sent(method(protocol.MethodWindowLogMessage)) {
		if strings.Contains(string(n.params), "episode-3/") || strings.Contains(string(n.params), "episode-2/bob") {
			t.Errorf("a WARN for a file with no unfielded line or out of the current episode: %s", n.params)
		}
	}
}
