package lsp_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"runls/retriever"
)

// TestClientCapabilities: answers fall back as LSP says for a client that
// announces no optional capability: documentSymbol answers
// SymbolInformation[] (the runs and their records in document order, each
// record's container its run) with kinds from File to Array only, hover is
// plain text; a client that announces them gets DocumentSymbol[] with
// Event records and Markdown (TestRecordRequestsReal pins those answers).
// Each capability is honoured alone. The minimal client's wire form is kept
// in golden files (go test -run ClientCapabilities -update).
func TestClientCapabilities(t *testing.T) {
	root := sampleRun(t)
	path := filepath.Join(root, "episode-2", "bob", "bob.log")
	full := start(t, startOpts{})
	full.initialize(root, false, nil)
	var tree []protocol.DocumentSymbol
	full.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &tree)
	if len(tree) == 0 || len(tree[0].Children) == 0 || tree[0].Children[0].Kind != protocol.SymbolKindEvent {
		t.Fatalf("the full client's outline %s: want runs with Event records", mustJSON(tree))
	}

	kinds := func(set ...int) map[string]any { return map[string]any{"valueSet": set} }
	for _, tt := range []struct {
		name                   string
		documentSymbol, hover  map[string]any
		hierarchical, markdown bool
		recordKind             protocol.SymbolKind
	}{
		{"none", nil, nil, false, false, protocol.SymbolKindString},
		{"hierarchy without kinds", map[string]any{"hierarchicalDocumentSymbolSupport": true}, nil, true, false, protocol.SymbolKindString},
		{"kinds 1-18", map[string]any{"hierarchicalDocumentSymbolSupport": true, "symbolKind": kinds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18)}, nil, true, false, protocol.SymbolKindString},
		{"kinds with Event, flat", map[string]any{"symbolKind": kinds(3, 15, 24)}, nil, false, false, protocol.SymbolKindEvent},
		{"plain-text hover", nil, map[string]any{"contentFormat": []string{"plaintext"}}, false, false, protocol.SymbolKindString},
		{"markdown hover", nil, map[string]any{"contentFormat": []string{"markdown"}}, false, true, protocol.SymbolKindString},
	} {
		t.Run(tt.name, func(t *testing.T) {
			caps := map[string]any{}
			td := map[string]any{}
			if tt.documentSymbol != nil {
				td["documentSymbol"] = tt.documentSymbol
			}
			if tt.hover != nil {
				td["hover"] = tt.hover
			}
			if len(td) > 0 {
				caps["textDocument"] = td
			}
			c := start(t, startOpts{})
			c.initializeWith(root, caps, map[string]any{"episode": "episode-2", "conversation": "conv-1"})
			c.waitIndexed()
			var raw []json.RawMessage
			c.mustCall(protocol.MethodTextDocumentDocumentSymbol, docParams(path), &raw)
			var report strings.Builder
			if tt.hierarchical {
				var got []protocol.DocumentSymbol
				remarshalTo(t, raw, &got)
				want := withRecordKind(tree, tt.recordKind)
				if canonical(t, got) != canonical(t, want) {
					t.Errorf("outline %s, want %s", mustJSON(got), mustJSON(want))
				}
			} else {
				var got []protocol.SymbolInformation
				remarshalTo(t, raw, &got)
				for _, r := range raw {
					if strings.Contains(string(r), `"children"`) || strings.Contains(string(r), `"selectionRange"`) {
						t.Errorf("a DocumentSymbol to a client without hierarchicalDocumentSymbolSupport: %s", r)
					}
				}
				if want := flatten(t, tree, path, tt.recordKind); canonical(t, got) != canonical(t, want) {
					t.Errorf("flat symbols %s, want %s", mustJSON(got), mustJSON(want))
				}
				fmt.Fprintf(&report, "documentSymbol:\n%s\n", indent(t, got))
			}
			for _, r := range raw {
				var k struct{ Kind int }
				remarshalTo(t, r, &k)
				if known := tt.documentSymbol != nil && tt.documentSymbol["symbolKind"] != nil; !known && (k.Kind < 1 || k.Kind > 18) {
					t.Errorf("kind %d to a client without a symbolKind valueSet: %s", k.Kind, r)
				}
			}
			var h protocol.Hover
			c.mustCall(protocol.MethodTextDocumentHover, hoverParams(path, 2), &h)
			wantKind := protocol.PlainText
			if tt.markdown {
				wantKind = protocol.Markdown
			}
			if h.Contents.Kind != wantKind || !strings.Contains(h.Contents.Value, "evidence: ") {
				t.Errorf("hover %s, want %s with the evidence line", mustJSON(h), wantKind)
			}
			if !tt.markdown && strings.ContainsAny(h.Contents.Value, "`*\\") {
				t.Errorf("a plain-text hover with Markdown in it: %q", h.Contents.Value)
			}
			var syms []protocol.SymbolInformation
			c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": "migration"}, &syms)
			for _, s := range syms {
				if s.Kind < 1 || s.Kind > 18 {
					t.Errorf("workspace/symbol kind %v", s.Kind)
				}
			}
			if tt.name == "none" {
				fmt.Fprintf(&report, "hover 2: %s\n%s\n", mustJSON(h.Range), h.Contents.Value)
				out := strings.ReplaceAll(report.String(), retriever.FileURI(root), "file://$RUN")
				golden(t, "capabilities/minimal-episode-2-bob-bob.log.txt", []byte(out))
			}
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
	if err := full.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// flatten is an outline as SymbolInformation, as LSP 3.16 clients without
// the hierarchy take it: each run, then its records, in document order.
func flatten(t *testing.T, tree []protocol.DocumentSymbol, path string, recordKind protocol.SymbolKind) []protocol.SymbolInformation {
	t.Helper()
	u := protocol.DocumentURI(retriever.FileURI(path))
	var out []protocol.SymbolInformation
	for _, run := range tree {
		out = append(out, protocol.SymbolInformation{Name: run.Name, Kind: run.Kind, Location: protocol.Location{URI: u, Range: run.Range}})
		for _, r := range run.Children {
			out = append(out, protocol.SymbolInformation{
				Name: r.Name + " (" + r.Detail + ")", Kind: recordKind,
				Location: protocol.Location{URI: u, Range: r.Range}, ContainerName: run.Name,
			})
		}
	}
	return out
}

func withRecordKind(tree []protocol.DocumentSymbol, kind protocol.SymbolKind) []protocol.DocumentSymbol {
	out := make([]protocol.DocumentSymbol, len(tree))
	for i, run := range tree {
		out[i] = run
		out[i].Children = make([]protocol.DocumentSymbol, len(run.Children))
		for j, r := range run.Children {
			r.Kind = kind
			out[i].Children[j] = r
		}
	}
	return out
}

func remarshalTo(t *testing.T, from, to any) {
	t.Helper()
	data, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, to); err != nil {
		t.Fatal(err)
	}
}
