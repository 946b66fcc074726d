package mcpserver_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"runls/internal/secretrun"
)

// TestMaskedOutputs calls every MCP tool that returns evidence (search,
// records, read) on secretrun's run (credential assignments in every context
// an agent run has), with masking off and on (issue 28, spec §8): off, each
// answer (text and structured content) shows a value, so the tool carries
// the evidence and the test can fail; on, none shows any part of one, and
// searching for the values finds nothing.
func TestMaskedOutputs(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "hidingOutside"}[on], func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "run")
			if err := secretrun.Write(root); err != nil {
				t.Fatal(err)
			}
			cs := start(t, root, startOpts{mask: on})
			answer := func(tool string, args map[string]any) string {
				t.Helper()
				data, err := json.Marshal(call(t, cs, tool, args))
				if err != nil {
					t.Fatal(err)
				}
				return string(data)
			}
			var read strings.Builder
			for p := range secretrun.Files() {
				read.WriteString(answer("read", map[string]any{"path": p}))
			}
			for _, tt := range []struct {
				name string
				got  string
			}{
				{"search", answer("search", map[string]any{"query": "deploy keys", "topK": 50})},
				{"search for the values", answer("search", map[string]any{"query": secretrun.ValuesQuery, "topK": 50})},
				{"records", answer("records", map[string]any{"episode": "episode-1"})},
				{"records of the conversation", answer("records", map[string]any{"episode": "episode-1", "conversation": "conv-1"})},
				{"read", read.String()},
			} {
				if msg := secretrun.Check(tt.name, on, true, tt.got); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}
