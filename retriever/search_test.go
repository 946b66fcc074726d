package retriever

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"runls/recordformat"
)

var rulesRun = map[string]string{
	"episode-1/alice/alice.history": "2026-10-21 18:00:00 [s] [c1] alice zebra one\n" +
		"2026-10-21 18:00:00 [s] [-] alice zebra dash\n" +
		"2026-10-21 18:00:00 [s] [c2] alice zebra two\n" +
		"2026-10-21 18:00:00 [s] alice zebra unfielded\n",
	"episode-2/alice/alice.log": "2026-10-21 18:00:00 INFO  [s] [c1] alice zebra ep2 one\n" +
		"2026-10-21 18:00:00 DEBUG [s] [c1] alice zebra debug\n" +
		"  zebra debug continuation\n" +
		"2026-10-21 18:00:00 TRACE [s] [c1] alice zebra trace\n" +
		"2026-10-21 18:00:00 INFO  [s] alice zebra ep2 unfielded\n",
	"episode-2/bob/notes.md":    "zebra note bob\n",
	"episode-1/alice/notes.txt": "zebra note alice\n",
	"zebra-run.txt":             "zebra outside any agent\n",
	"episode-1/zebra.txt":       "zebra in an episode folder\n",
	"other/alice/notes.txt":     "zebra in a folder not named episode-N\n",
	"episode-x/alice/notes.txt": "zebra in episode-x\n",
}

func TestEvidenceRules(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, rulesRun)})
	ep1Records := []string{"alice zebra one", "alice zebra dash"}
	ep2Records := []string{"alice zebra ep2 one", "alice zebra ep2 unfielded"}
	notes := []string{"zebra note alice", "zebra note bob"}
	tests := []struct {
		name string
		req  Request
		want []string
	}{
		{"no episode nor conversation: plain files only", Request{}, notes},
		{"an episode without a conversation: plain files only", Request{Episode: "episode-1"}, notes},
		{"a conversation without an episode: plain files only", Request{Conversation: "c1"}, notes},
		{"current episode: its conversation and -, other episodes whole", Request{Episode: "episode-1", Conversation: "c1"},
			concat(ep1Records, ep2Records, notes)},
		{"leading zeros name the same episode", Request{Episode: "episode-001", Conversation: "c1"},
			concat(ep1Records, ep2Records, notes)},
		{"another conversation", Request{Episode: "episode-1", Conversation: "c2"},
			concat([]string{"alice zebra dash", "alice zebra two"}, ep2Records, notes)},
		{"an unknown conversation still gets -", Request{Episode: "episode-1", Conversation: "nope"},
			concat([]string{"alice zebra dash"}, ep2Records, notes)},
		{"scope episode", Request{Episode: "episode-1", Conversation: "c1", Scope: "episode"},
			concat(ep1Records, []string{"zebra note alice"})},
		{"scope episode without an episode finds nothing", Request{Scope: "episode"}, nil},
		{"an episode with no files: every other episode whole, unfielded too", Request{Episode: "episode-3", Conversation: "c1"},
			concat(ep1Records, []string{"alice zebra two", "alice zebra unfielded"}, ep2Records, notes)},
		{"one agent", Request{Agent: "bob", Episode: "episode-1", Conversation: "c1"}, []string{"zebra note bob"}},
		{"an unknown agent", Request{Agent: "nobody"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Query, tt.req.TopK = "zebra", 100
			got := sortedTexts(search(t, ix, tt.req))
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func TestUnfieldedWarnsOncePerFile(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	ix := openTest(t, Options{Root: writeRun(t, rulesRun), Logger: zap.New(core)})
	for range 3 {
		search(t, ix, Request{Query: "zebra", Episode: "episode-1", Conversation: "c1"})
	}
	n := 0
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "conversation field") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("got %d WARNs about unfielded lines, want 1: %v", n, logs.All())
	}
}

func TestRequestValidation(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, rulesRun)})
	tests := []struct {
		req   Request
		field string
	}{
		{Request{Episode: "episode-"}, "episode"},
		{Request{Episode: "episode--1"}, "episode"},
		{Request{Episode: "episode-+1"}, "episode"},
		{Request{Episode: "ep-1"}, "episode"},
		{Request{Episode: "episode-1a"}, "episode"},
		{Request{Scope: "all"}, "scope"},
		{Request{TopK: -1}, "topK"},
		{Request{TopK: 1001}, "topK"},
		{Request{Agent: "a/b"}, "agent"},
		{Request{Agent: `a\b`}, "agent"},
		{Request{Agent: "."}, "agent"},
		{Request{Agent: ".."}, "agent"},
		{Request{Query: strings.Repeat("w", 0) + manyTerms(MaxQueryTerms+1)}, "query"},
	}
	for _, tt := range tests {
		_, err := ix.Search(context.Background(), tt.req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%+v: got %v, want an error naming %s", tt.req, err, tt.field)
			continue
		}
		if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("error %q does not name the field", err)
		}
	}
	for _, ok := range []Request{{TopK: 1}, {TopK: 1000}, {Scope: "run"}, {Episode: "episode-0"}, {Episode: "episode-99999999999999999999999"}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

func manyTerms(n int) string {
	var sb strings.Builder
	for i := range n {
		sb.WriteString("t")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString(string(rune('a' + i%26)))
		sb.WriteString(string(rune('a' + (i/26)%26)))
		sb.WriteString(string(rune('a' + (i/676)%26)))
		sb.WriteByte(' ')
	}
	return sb.String()
}

func TestTopKAndTies(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-10/a/n.txt": "kiwi ten\n",
		"episode-2/b/n.txt":  "kiwi two b\n",
		"episode-2/a/n.txt":  "kiwi two a\nkiwi two a2\n",
	})})
	// "kiwi" scores by length only: the three-term pieces tie and come in
	// location order (episode numerically, then path, then line).
	got := texts(search(t, ix, Request{Query: "kiwi", TopK: 10}))
	want := []string{"kiwi ten", "kiwi two a", "kiwi two a2", "kiwi two b"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := search(t, ix, Request{Query: "kiwi", TopK: 2}); len(got) != 2 {
		t.Fatalf("topK 2: got %d", len(got))
	}
	if got := search(t, ix, Request{Query: "kiwi"}); len(got) != 4 {
		t.Fatalf("default topK 5: got %d", len(got))
	}
}

func TestGivenOnce(t *testing.T) {
	interp := mustRules(t)
	run := map[string]string{
		"episode-2/b/b.history": "2026-10-21 18:00:00 [s] [c] B said: lemon pie\n",
		"episode-1/a/a.history": "2026-10-21 18:00:00 [s] [c] A said: lemon pie\n" +
			"2026-10-21 18:00:00 [s] [c] A was told: lemon tart\n",
		"episode-1/a/notes.txt": "lemon note\n",
		"episode-2/b/notes.txt": "lemon note\n",
	}
	ix := openTest(t, Options{Root: writeRun(t, run), Interpreter: interp})
	items := search(t, ix, Request{Query: "lemon pie tart note", Episode: "episode-3", Conversation: "c", TopK: 10})
	if got := sortedTexts(items); !slices.Equal(got, []string{"lemon note", "lemon pie", "lemon tart"}) {
		t.Fatalf("got %q", got)
	}
	for _, it := range items {
		if it.Text == "lemon pie" && (it.Episode != "episode-1" || it.Reading != ReadingSaid) {
			t.Errorf("the first in location order is kept on a tie: %+v", it)
		}
		if it.Text == "lemon note" && it.Episode != "episode-1" {
			t.Errorf("note: %+v", it)
		}
	}
	// The told record of the turn message is not returned, but still counts.
	items = search(t, ix, Request{TurnMessage: "  lemon tart \n", Episode: "episode-3", Conversation: "c", TopK: 10})
	for _, it := range items {
		if it.Text == "lemon tart" {
			t.Fatalf("told record of the turn message returned: %+v", it)
		}
	}
	if len(items) == 0 {
		t.Fatal("the turn message ranks the rest")
	}
}

// TestGivenOnceIgnoresSurroundingSpace: the same text at two indentation
// depths is given once (spec §3 rev 3), the first in location order.
func TestGivenOnceIgnoresSurroundingSpace(t *testing.T) {
	run := map[string]string{
		"episode-1/a/traj.json": "{\n  \"content\": \"quince jam\"\n}\n    quince jam\t\n",
		"episode-1/a/notes.txt": "quince jam\nquince jam pot\n",
	}
	ix := openTest(t, Options{Root: writeRun(t, run)})
	items := search(t, ix, Request{Query: "quince jam", TopK: 10})
	var plain int
	for _, it := range items {
		if strings.TrimSpace(it.Text) == "quince jam" {
			plain++
			if !strings.HasSuffix(it.Location.URI, "/notes.txt") || it.Text != "quince jam" {
				t.Errorf("kept %+v, want the first in location order (notes.txt, before traj.json)", it)
			}
		}
	}
	if plain != 1 {
		t.Fatalf("%q: the text given %d times, want once", texts(items), plain)
	}
}

func mustRules(t testing.TB) *Interpreter {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "interpreter.json"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInterpreter(data)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestInterpreter(t *testing.T) {
	in := mustRules(t)
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/a.history": "2026-10-21 18:00:00 [s] [c] Alice was told: grape\n  juice é\n" +
			"2026-10-21 18:00:00 [s] [c] Alice chat started\n",
		"episode-1/a/a.log":     "2026-10-21 18:00:00 INFO  [s] [c] Alice said: grape soda\n",
		"episode-1/a/n.txt":     "Alice chat started\n", // rules apply to record files only
		"episode-1/a/n2.txt":    "Alice said: grape note\n",
		"episode-1/a/x.history": "2026-10-21 18:00:00 [s] [c] Alice mentions grape\n",
	}), Interpreter: in})
	items := search(t, ix, Request{Query: "grape juice soda chat started note mentions", Episode: "episode-1", Conversation: "c", TopK: 20})
	got := map[string]Item{}
	for _, it := range items {
		got[it.Text] = it
	}
	want := map[string]Reading{"grape": ReadingTold, "juice é": ReadingTold, "grape soda": ReadingSaid, "Alice chat started": ReadingNote, "Alice said: grape note": ReadingNote, "Alice mentions grape": ReadingNote}
	if len(got) != len(want) {
		t.Fatalf("got %q", texts(items))
	}
	for text, r := range want {
		if got[text].Reading != r {
			t.Errorf("%q: reading %q, want %q", text, got[text].Reading, r)
		}
	}
	// The told message's range points at its characters in the file.
	g := got["grape"].Location.Range
	if g.Start.Line != 0 || g.Start.Character != len("2026-10-21 18:00:00 [s] [c] Alice was told: ") || g.End.Character != g.Start.Character+5 {
		t.Errorf("told range %+v", g)
	}
	j := got["juice é"].Location.Range
	if j.Start.Line != 1 || j.Start.Character != 2 || j.End.Character != 9 {
		t.Errorf("continuation range %+v", j)
	}
}

func TestParseInterpreterErrors(t *testing.T) {
	for _, tt := range []struct{ json, want string }{
		{`[]`, "not a JSON object"},
		{`{}`, `no "rules"`},
		{`{"rules":[{"match":"(","reading":"note"}]}`, "rule 0"},
		{`{"rules":[{"match":"a","reading":"note"},{"match":"b","reading":"heard"}]}`, `rule 1: reading "heard"`},
		{`{"rules":[{"reading":"note"}]}`, `rule 0: no "match"`},
		{`{"rules":[{"match":"x"}]}`, `rule 0: no "reading"`},
	} {
		_, err := ParseInterpreter([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.json, err, tt.want)
		}
	}
}

func TestPiecesOfLongLines(t *testing.T) {
	// 1999 ASCII characters then an emoji (2 units): the pair does not fit in
	// the first piece and is not split.
	line := strings.Repeat("a", 1999) + "😀" + strings.Repeat(" word", 800)
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/n.txt": "\n\n" + line + "\n",
	})})
	items := search(t, ix, Request{Query: strings.Repeat("a", 1999) + " word", TopK: 10})
	if len(items) != 3 {
		t.Fatalf("got %d pieces: %q", len(items), texts(items))
	}
	var ranges [][2]int
	for _, it := range items {
		r := it.Location.Range
		if r.Start.Line != 2 || r.End.Line != 2 {
			t.Fatalf("range %+v", r)
		}
		if n := recordformat.UTF16Len([]byte(it.Text)); n > MaxPieceChars || n != r.End.Character-r.Start.Character {
			t.Fatalf("piece of %d units, range %+v", n, r)
		}
		ranges = append(ranges, [2]int{r.Start.Character, r.End.Character})
	}
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	if ranges[0] != [2]int{0, 1999} || ranges[1] != [2]int{1999, 3999} || ranges[2] != [2]int{3999, 5999} {
		t.Fatalf("ranges %v", ranges)
	}
}

func TestBlankAndTermlessPiecesAreNotIndexed(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/n.txt": "\n   \n---\nfig\n",
	})})
	ix.Refresh(context.Background(), nil)
	if got := ix.state.Stats.Docs(0); got != 1 {
		t.Fatalf("%d pieces indexed, want 1", got)
	}
}

// A rules file is read only when it is a regular file: a FIFO named by
// mistake is an error at once, not a wait for a writer.
func TestLoadInterpreterFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.json")
	must(t, os.WriteFile(good, []byte(`{"rules":[{"match":"x","reading":"note"}]}`), 0o644))
	if _, err := LoadInterpreter(good); err != nil {
		t.Fatalf("regular file: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	mkfifo(t, fifo)
	done := make(chan error, 1)
	go func() { _, err := LoadInterpreter(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO as rules blocked")
	}
	if _, err := LoadInterpreter(dir); err == nil {
		t.Fatal("a folder read as rules")
	}
	if _, err := LoadInterpreter(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("a missing file read as rules")
	}
}
