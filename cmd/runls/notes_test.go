package main

import (
	"encoding/json"
	"strings"
	"testing"

	"runls/retriever"
)

// TestSearchNotes: after the results, stderr has a line per notice and one
// for what the filters hid, each beginning "runls: note: " (spec §12); the
// exit status stays grep's.
func TestSearchNotes(t *testing.T) {
	td := testdata(t)
	tests := []struct {
		name string
		args []string
		code int
		want []string // stderr lines, in order
	}{
		{"all found", []string{"--episode", "episode-2", "--conversation", "conv-1"}, 0, nil},
		{"an agent in another case", []string{"--agent", "Alice", "--episode", "episode-2", "--conversation", "conv-1"}, 1, []string{
			"runls: note: the run has no agent folder named Alice (alice differs only in case); try --agent alice"}},
		{"an unknown conversation, and what its filter hid", []string{"--episode", "episode-2", "--conversation", "conv-99"}, 0, []string{
			"runls: note: no record of episode-2 was written in conversation conv-99",
			"runls: note: the filters hid 2 of the 5 best pieces: 2 in other conversations of episode-2 (--all-conversations)"}},
		{"no context", nil, 0, []string{
			"runls: note: the filters hid 3 of the 5 best pieces: 3 in record files, searched only with both --episode and --conversation"}},
		{"a missing episode with scope episode", []string{"--scope", "episode", "--episode", "episode-9", "--conversation", "conv-1"}, 1, []string{
			"runls: note: the run has no folder episode-9",
			"runls: note: the filters hid 5 of the 5 best pieces: 5 outside episode-9 (--scope run)"}},
		{"every conversation shows them", []string{"--episode", "episode-2", "--conversation", "conv-99", "--all-conversations"}, 0, []string{
			"runls: note: no record of episode-2 was written in conversation conv-99"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"search"}, tt.args...), "sample-run", "deploy", "database", "migration")
			code, _, errs := runCLI(t, td, args...)
			got := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			if errs == "" {
				got = nil
			}
			if code != tt.code || strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, errs, tt.code, strings.Join(tt.want, "\n"))
			}
			// --json says the same in the result, and nothing on stderr.
			code, js, errs := runCLI(t, td, append([]string{"search", "--json"}, args[1:]...)...)
			var res retriever.Result
			if err := json.Unmarshal([]byte(js), &res); err != nil || errs != "" || code != tt.code {
				t.Fatalf("--json: exit %d, %v, stderr %q", code, err, errs)
			}
			if n := len(res.Notices); res.Hidden.Total() == 0 && n == 0 && tt.want != nil {
				t.Errorf("--json has neither hidden nor notices: %s", js)
			}
		})
	}
}

// TestSubcommandHelp: --help (and -h) print the synopsis and every flag on a
// line of its own, on stdout, and exit 0.
func TestSubcommandHelp(t *testing.T) {
	td := testdata(t)
	for _, tt := range []struct {
		cmd   string
		flags []string
	}{
		{"search", []string{"--agent A", "--episode episode-N", "--conversation C", "--all-conversations", "--scope run|episode", "--top-k K", "--mask", "--interpreter rules.json", "--json"}},
		{"check", []string{"--code CODE", "--summary"}},
	} {
		for _, h := range []string{"--help", "-h"} {
			code, out, errs := runCLI(t, td, tt.cmd, h)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: runls "+tt.cmd+" [flags] RUN_FOLDER") {
				t.Fatalf("%s %s: exit %d, stderr %q, stdout %q", tt.cmd, h, code, errs, out)
			}
			for _, f := range tt.flags {
				found := false
				for _, line := range strings.Split(out, "\n") {
					if strings.HasPrefix(strings.TrimSpace(line), f+" ") && len(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f))) > 10 {
						found = true
					}
				}
				if !found {
					t.Errorf("%s %s: no line for %s:\n%s", tt.cmd, h, f, out)
				}
			}
		}
	}
}
