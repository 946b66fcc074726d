package lsp_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"runls/internal/secretrun"
	"runls/lsp"
)

// TestMaskedOutputs asks every output path of the server for the evidence of
// secretrun's run (credential assignments in every context an agent run has)
// with masking off and on (issue 28, spec §8's last paragraph, which names
// run/failures too): off, each
// path that carries evidence text shows a value (so the test can fail); on,
// none shows any part of one, and a search for the values finds nothing.
// The server makes no conversation document of its own: run/records of a
// conversation is how it lists one.
func TestMaskedOutputs(t *testing.T) {
	for _, masking := range []string{"off", "hidingOutside"} {
		t.Run(masking, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "run")
			if err := secretrun.Write(root); err != nil {
				t.Fatal(err)
			}
			c := start(t, startOpts{})
			c.initialize(root, false, map[string]any{"masking": masking, "episode": "episode-1", "conversation": "conv-1"})
			c.waitIndexed()
			raw := func(method string, params any) string {
				t.Helper()
				var res json.RawMessage
				c.mustCall(method, params, &res)
				return string(res)
			}
			history := filepath.Join(root, "episode-1/alice/alice.history")
			logFile := filepath.Join(root, "episode-1/alice/alice.log")
			hovers := func(path string, lines int) string {
				var b strings.Builder
				for l := range lines {
					b.WriteString(raw(protocol.MethodTextDocumentHover, hoverParams(path, l)))
				}
				return b.String()
			}
			// carries: the path shows evidence text. Hover shows a record's
			// header (who, when, level, reading), not its text.
			paths := []struct {
				name    string
				get     func() string
				carries bool
			}{
				{"run/search", func() string {
					return raw(lsp.MethodRunSearch, map[string]any{"query": "deploy keys", "topK": 50})
				}, true},
				{"run/search for the values", func() string {
					return raw(lsp.MethodRunSearch, map[string]any{"query": secretrun.ValuesQuery, "topK": 50})
				}, true},
				{"workspace/symbol", func() string {
					return raw(protocol.MethodWorkspaceSymbol, map[string]any{"query": "deploy"})
				}, true},
				{"textDocument/hover", func() string { return hovers(history, 2) + hovers(logFile, 10) }, false},
				{"textDocument/documentSymbol", func() string {
					return raw(protocol.MethodTextDocumentDocumentSymbol, docParams(history)) + raw(protocol.MethodTextDocumentDocumentSymbol, docParams(logFile))
				}, true},
				{"run/records", func() string {
					return raw(lsp.MethodRunRecords, map[string]any{"episode": "episode-1", "limit": 100})
				}, true},
				{"run/failures", func() string {
					return raw(lsp.MethodRunFailures, map[string]any{"episode": "episode-1"})
				}, true},
				{"run/records of the conversation", func() string {
					return raw(lsp.MethodRunRecords, map[string]any{"episode": "episode-1", "conversation": "conv-1", "limit": 100})
				}, true},
			}
			for _, p := range paths {
				if msg := secretrun.Check(p.name, masking != "off", p.carries, p.get()); msg != "" {
					t.Error(msg)
				}
			}
			// Diagnostics are published, not asked for: what was sent so far.
			var diags strings.Builder
			for _, n := range c.sent(method(protocol.MethodTextDocumentPublishDiagnostics)) {
				diags.Write(n.params)
			}
			if leak := secretrun.Leak(diags.String()); masking != "off" && leak != "" {
				t.Errorf("publishDiagnostics shows %q:\n%s", leak, diags.String())
			}
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
}
