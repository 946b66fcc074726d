package retriever

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"runls/masking"
)

// TestRecordsGolden writes, for each record fixture and a few files of the
// sample run, the grouped diagnostics, the outline, the folds and the facts
// of every record (hover) under two sets of settings, and compares them with
// golden files (go test -run RecordsGolden -update rewrites them). The
// fixtures are read with the interpreter of testdata/interpreter.json and
// with masking on, so readings, leftOut rules and masked names show.
func TestRecordsGolden(t *testing.T) {
	files := map[string]string{}
	for _, fx := range recordFixtures {
		files[fx.file] = fx.text
	}
	files["episode-3/erin/masked.log"] = "" +
		"2026-10-22 12:00:00.000 INFO  [running] [conv-4] Erin read /home/erin/.ssh/config and ~/notes/plan.md\n" +
		"2026-10-22 12:00:01.000 INFO  [running] [conv-4] Erin got password=hunter2hunter2\n" +
		"2026-10-22 12:00:02.000 INFO  [running] [conv-4] /etc/shadow\n" +
		"2026-10-22 12:00:03.000 INFO  [running] [conv-4] Erin chat stopped\n" +
		"2026-10-22 12:00:04.000 INFO  [running] [conv-4] ---\n" +
		"2026-10-22 12:00:05.000 INFO  [/home/erin/secret-state] [token=abcdef0123456789abcdef] Erin odd fields\n" +
		"2026-10-22 12:00:06.000 INFO  [running] [conv-4] Erin " + strings.Repeat("long ", 30) + "😀 line\n"
	root := writeRun(t, files)
	ix := openTest(t, Options{Root: root, Interpreter: mustRules(t), Masker: masking.HidingOutside(root)})
	sample, err := filepath.Abs(filepath.Join("..", "testdata", "sample-run"))
	must(t, err)
	plain := openTest(t, Options{Root: sample})
	for _, ix := range []*Index{ix, plain} {
		_, err := ix.Refresh(context.Background(), nil)
		must(t, err)
	}
	type golden struct {
		name string
		ix   *Index
		path string
	}
	var cases []golden
	for _, fx := range recordFixtures {
		cases = append(cases, golden{fx.name, ix, filepath.Join(root, fx.file)})
	}
	cases = append(cases, golden{"masked", ix, filepath.Join(root, "episode-3/erin/masked.log")})
	for _, f := range []string{"episode-2/bob/bob.log", "episode-1/alice/alice.history", "episode-2/carol/carol.history"} {
		cases = append(cases, golden{"sample-" + strings.ReplaceAll(f, "/", "-"), plain, filepath.Join(sample, f)})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkGolden(t, filepath.Join("testdata", "golden", "records", c.name+".txt"), recordsReport(t, c.ix, c.path))
		})
	}
}

func recordsReport(t *testing.T, ix *Index, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	rng := func(r Range) string {
		return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
	}
	fmt.Fprintln(&b, "== diagnostics")
	for _, d := range ix.Diagnostics(path, 0) {
		sev := map[Severity]string{SeverityWarning: "warning", SeverityInformation: "info", SeverityHint: "hint"}[d.Severity]
		fmt.Fprintf(&b, "%s %s [%s] %s\n", rng(d.Range), sev, d.Code, d.Message)
	}
	fmt.Fprintln(&b, "== outline")
	out, err := ix.Outline(context.Background(), path, 0)
	must(t, err)
	for _, run := range out.Runs {
		name := "(no conversation field)"
		if run.Conversation != nil {
			name = *run.Conversation
		}
		fmt.Fprintf(&b, "%s %s selection %s\n", name, rng(run.Range), rng(run.Selection))
		for _, r := range run.Records {
			fmt.Fprintf(&b, "  %q %q %s selection %s\n", r.Name, r.Detail, rng(r.Range), rng(r.Selection))
		}
	}
	fmt.Fprintln(&b, "== folds")
	for _, f := range ix.Folds(path) {
		fmt.Fprintf(&b, "%d-%d\n", f.StartLine, f.EndLine)
	}
	episode := strings.Split(strings.TrimPrefix(path, ix.Root()+"/"), "/")[0]
	for _, req := range []Request{{Episode: episode, Conversation: "conv-1"}, {}} {
		fmt.Fprintf(&b, "== hover, settings %+v\n", req)
		fs := ix.recordFile(path)
		for i := 0; i < fs.Records().Len(); i++ {
			for _, line := range []uint32{fs.Records().Line(i), fs.Records().Last(i)} {
				facts, err := ix.RecordAt(context.Background(), path, int(line), req)
				must(t, err)
				j, _ := json.Marshal(facts)
				fmt.Fprintf(&b, "line %d: %s\n", line, j)
				if fs.Records().Last(i) == fs.Records().Line(i) {
					break
				}
			}
		}
	}
	return b.Bytes()
}
