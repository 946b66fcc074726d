package main

import (
	"path/filepath"
	"strings"
	"testing"

	"runls/internal/secretrun"
)

// TestMaskedOutputs runs the CLI's evidence commands (runls search, runls
// records and runls failures, as text and as JSON) on secretrun's run (credential
// assignments in every context an agent run has), without and with --mask
// (issue 28, spec §8): without, each output shows a value, so the command
// carries the evidence and the test can fail; with it, none shows any part
// of one, and searching for the values finds nothing.
func TestMaskedOutputs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RUNLS_CACHE_DIR", filepath.Join(dir, "cache"))
	if err := secretrun.Write(filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	search := func(flags ...string) []string {
		return append([]string{"search", "--episode", "episode-1", "--conversation", "conv-1", "--top-k", "50"}, flags...)
	}
	commands := []struct {
		name string
		args []string
	}{
		{"runls search", search("run", "deploy", "keys")},
		{"runls search --json", search("--json", "run", "deploy", "keys")},
		{"runls search for the values", search(append([]string{"run"}, strings.Fields(secretrun.ValuesQuery)...)...)},
		{"runls records", []string{"records", "run", "episode-1"}},
		{"runls records --json", []string{"records", "--json", "run", "episode-1"}},
		{"runls records of the conversation", []string{"records", "--conversation", "conv-1", "run", "episode-1"}},
		{"runls failures", []string{"failures", "run"}},
		{"runls failures --json", []string{"failures", "--json", "run"}},
	}
	for _, mask := range []bool{false, true} {
		for _, c := range commands {
			args := c.args
			if mask {
				args = append([]string{args[0], "--mask"}, args[1:]...)
			}
			code, out, errs := runCLI(t, dir, args...)
			if code == exitNotFound && out == "" && mask && strings.HasSuffix(c.name, "for the values") {
				continue // nothing found, as it should be
			}
			if code != exitFound {
				t.Errorf("%v: exit %d, stderr %q", args, code, errs)
				continue
			}
			if msg := secretrun.Check(c.name, mask, true, out+errs); msg != "" {
				t.Error(msg)
			}
		}
	}
}
