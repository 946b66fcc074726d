// Package secretrun writes the run that the output-path tests of masking
// read (issue 28, spec §8): the credential assignments that no entropy bar
// would take for secrets, in every context an agent run writes them in. The
// language server's, the MCP server's and the CLI's tests each ask every
// output path of theirs for this run's evidence, with masking off and on.
package secretrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Assignments are the values a credential name announces (issue 28's own).
var Assignments = []string{
	"api_key=zqxapikeyvalue123",
	"secret=zqxsecretvalue456",
	"token=zqxtokenvalue789",
	"export OPENAI_API_KEY=sk-abcdef…",
}

// leaks are the parts of the assigned values that must never leave runls
// with masking on.
var leaks = []string{"zqxapikeyvalue123", "zqxsecretvalue456", "zqxtokenvalue789", "sk-abcdef", "zqx"}

// ValuesQuery is a query for the values' own terms: with masking on it
// finds nothing (what is hidden is not searchable).
const ValuesQuery = "zqxapikeyvalue123 zqxsecretvalue456 zqxtokenvalue789 abcdef"

// Files returns the run's files (slash paths under the run folder): a
// .history message told and said, .log records with a level (an ERROR among
// them, for the failures) and one with an indented JSON body, an env dump in
// a note, a plain note; all in
// episode-1, agent alice, conversation conv-1, each with the word "deploy".
func Files() map[string]string {
	all := strings.Join(Assignments, " ")
	body, err := json.MarshalIndent(map[string]any{"tool": "write_file", "args": map[string]any{"content": all}}, "  ", "  ")
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return map[string]string{
		"episode-1/alice/alice.history": "2026-10-21 18:00:00 [running] [conv-1] alice was told: deploy with " + all + "\n" +
			"2026-10-21 18:00:01 [running] [conv-1] alice said: deploy done using " + all + "\n",
		"episode-1/alice/alice.log": "2026-10-21 18:00:02 WARN  [running] [conv-1] alice deploy failed with " + all + "\n" +
			"2026-10-21 18:00:03 INFO  [running] [conv-1] alice deploy tool call body:\n  " + string(body) + "\n" +
			"2026-10-21 18:00:04 ERROR [running] [conv-1] alice deploy crashed with " + all + "\n",
		"episode-1/alice/env.md":   "deploy env dump:\n\nHOSTNAME=agent-7\n" + strings.Join(Assignments, "\n") + "\nTERM=xterm\n",
		"episode-1/alice/notes.md": "deploy notes: the keys are " + all + "\n",
	}
}

// Write writes the run's files under root.
func Write(root string) error {
	for name, text := range Files() {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write the secret run: %w", err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return fmt.Errorf("write the secret run: %w", err)
		}
	}
	return nil
}

// Leak returns the first part of an assigned value that text shows, or "".
func Leak(text string) string {
	for _, l := range leaks {
		if strings.Contains(text, l) {
			return l
		}
	}
	return ""
}

// Check judges one output path's answer: with masking on it may show no
// part of a value; off, it must show one when the path carries evidence text
// (or the test of it proves nothing), and none when it does not. It returns
// what is wrong, or "".
func Check(path string, on, carries bool, answer string) string {
	leak := Leak(answer)
	switch {
	case on && leak != "":
		return fmt.Sprintf("%s with masking on shows %q:\n%s", path, leak, answer)
	case !on && carries && leak == "":
		return fmt.Sprintf("%s with masking off shows no value, so the test of it proves nothing:\n%s", path, answer)
	case !on && !carries && leak != "":
		return fmt.Sprintf("%s now shows evidence text (%q): mark it as carrying it, so that masking off proves its test:\n%s", path, leak, answer)
	}
	return ""
}
