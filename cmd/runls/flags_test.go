package main

import (
	"strings"
	"testing"
)

// TestFlagsAnywhere: every subcommand takes its flags before, between or
// after its positional arguments, with the same answer (spec §10); what
// follows "--" is positional.
func TestFlagsAnywhere(t *testing.T) {
	td := testdata(t)
	tests := []struct {
		name        string
		before, any []string
	}{
		{"search: flags after the query",
			[]string{"search", "--episode", "episode-2", "--conversation", "conv-1", "sample-run", "deploy", "database"},
			[]string{"search", "sample-run", "deploy", "database", "--episode", "episode-2", "--conversation", "conv-1"}},
		{"search: flags between the words",
			[]string{"search", "--episode", "episode-2", "--conversation", "conv-1", "--json", "sample-run", "deploy", "database"},
			[]string{"search", "sample-run", "deploy", "--episode=episode-2", "database", "--json", "--conversation", "conv-1"}},
		{"check: flags after the run folder",
			[]string{"check", "--summary", "--code", "unfielded-line", "sample-run"},
			[]string{"check", "sample-run", "--summary", "--code", "unfielded-line"}},
		{"records: flags after the episode",
			[]string{"records", "--conversation", "conv-1", "--min-level", "WARN", "sample-run", "episode-2"},
			[]string{"records", "sample-run", "episode-2", "--conversation", "conv-1", "--min-level", "WARN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code1, out1, err1 := runCLI(t, td, tt.before...)
			code2, out2, err2 := runCLI(t, td, tt.any...)
			if code1 != code2 || out1 != out2 || err1 != err2 {
				t.Errorf("flags first: exit %d\n%s%s\nflags anywhere: exit %d\n%s%s", code1, out1, err1, code2, out2, err2)
			}
			if out1 == "" {
				t.Errorf("no output to compare (exit %d, %s)", code1, err1)
			}
		})
	}
}

// TestDashDashEndsFlags: after "--", a word that starts with "-" is a query
// word, not a flag (nor an error).
func TestDashDashEndsFlags(t *testing.T) {
	td := testdata(t)
	code, out, errs := runCLI(t, td, "search", "--json", "sample-run", "--", "--episode", "deploy")
	if code != 0 || errs != "" || !strings.Contains(out, `"items"`) {
		t.Errorf("exit %d, stderr %q, stdout %.200q: want the words searched", code, errs, out)
	}
	// Without "--", the unknown flag is a loud error, never a word.
	code, out, errs = runCLI(t, td, "search", "sample-run", "deploy", "--epsiode", "episode-2")
	if code != 2 || out != "" || !strings.Contains(errs, "epsiode") {
		t.Errorf("a misspelt flag after the query: exit %d, stdout %q, stderr %q; want exit 2 naming it", code, out, errs)
	}
}

// TestUsageErrorIsTheSubcommands: a bad use prints one error line and the
// usage of that subcommand alone (spec §10), exit 2.
func TestUsageErrorIsTheSubcommands(t *testing.T) {
	td := testdata(t)
	others := map[string][]string{
		"search":  {"runls check", "runls records", "runls mcp"},
		"check":   {"runls search", "runls records", "runls mcp"},
		"records": {"runls search", "runls check", "runls mcp"},
	}
	tests := []struct {
		cmd  string
		args []string
	}{
		{"search", []string{"search", "--top-k", "0", "sample-run", "x"}},
		{"search", []string{"search", "sample-run"}},
		{"search", []string{"search", "sample-run", "x", "--nope"}},
		{"check", []string{"check", "sample-run", "--code", "nope"}},
		{"check", []string{"check"}},
		{"records", []string{"records", "sample-run", "episode-x"}},
		{"records", []string{"records", "sample-run", "episode-2", "--limit", "0"}},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, td, tt.args...)
		first, rest, _ := strings.Cut(errs, "\n")
		if code != 2 || out != "" || !strings.HasPrefix(first, "runls: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, one error line", tt.args, code, out, errs)
			continue
		}
		if !strings.HasPrefix(rest, "usage: runls "+tt.cmd+" ") {
			t.Errorf("%q: after the error, %q; want the usage of %s", tt.args, rest, tt.cmd)
		}
		for _, o := range others[tt.cmd] {
			if strings.Contains(rest, o) {
				t.Errorf("%q: the usage names %s too:\n%s", tt.args, o, rest)
			}
		}
	}
}
