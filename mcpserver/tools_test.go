package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/mcpserver"
)

// TestTools calls each tool on the sample run through the SDK's client and
// compares the whole answer (text, structured content, isError) with its
// golden file.
func TestTools(t *testing.T) {
	root := sampleRun(t)
	plain := start(t, root, startOpts{})
	rules := start(t, root, startOpts{interpreter: filepath.Join(root, "..", "interpreter.json")})
	tests := []struct {
		name  string
		rules bool
		tool  string
		args  map[string]any
	}{
		{"search-notes-only", false, "search", map[string]any{"query": "deploy database migration"}},
		{"search-episode-conversation", false, "search", map[string]any{"query": "deploy database migration", "episode": "episode-2", "conversation": "conv-1", "topK": 5}},
		{"search-turn-message-rules", true, "search", map[string]any{"turnMessage": "Deploy the billing service once the database migration passes.", "episode": "episode-2", "conversation": "conv-1"}},
		{"search-agent-scope", false, "search", map[string]any{"query": "hotel booking", "agent": "bob", "episode": "episode-2", "conversation": "conv-2", "scope": "episode"}},
		{"search-nothing", false, "search", map[string]any{"query": "quokka"}},
		{"search-utf16", false, "search", map[string]any{"query": "café crème", "episode": "episode-2", "conversation": "conv-1"}},
		{"read-record-file", false, "read", map[string]any{"path": "episode-2/bob/bob.log", "startLine": 1, "endLine": 8}},
		{"read-default-lines", false, "read", map[string]any{"path": "episode-2/alice/notes.md"}},
		{"read-end-of-file", false, "read", map[string]any{"path": "episode-10/alice/retro.md", "startLine": 2}},
		{"run-info", false, "run_info", map[string]any{}},
		{"records-conversation", false, "records", map[string]any{"episode": "episode-2", "conversation": "conv-1", "limit": 8}},
		{"records-outside-conversations", false, "records", map[string]any{"episode": "episode-2", "conversation": "-"}},
		{"records-agent-level-window", true, "records", map[string]any{"episode": "episode-2", "agent": "bob", "minLevel": "WARN", "from": "2026-10-21 18:00:00", "to": "2026-10-21 18:10:00"}},
		{"records-unfielded-episode", false, "records", map[string]any{"episode": "episode-1", "agent": "alice", "limit": 3}},
		{"records-nothing", false, "records", map[string]any{"episode": "episode-2", "conversation": "conv-9"}},
		{"error-records-no-episode", false, "records", map[string]any{"conversation": "conv-1"}},
		{"error-records-episode", false, "records", map[string]any{"episode": "2"}},
		{"error-records-limit-range", false, "records", map[string]any{"episode": "episode-2", "limit": 501}},
		{"error-records-limit-zero", false, "records", map[string]any{"episode": "episode-2", "limit": 0}},
		{"error-records-min-level", false, "records", map[string]any{"episode": "episode-2", "minLevel": "LOUD"}},
		{"error-records-from", false, "records", map[string]any{"episode": "episode-2", "from": "yesterday"}},
		{"error-records-cursor", false, "records", map[string]any{"episode": "episode-2", "cursor": "next"}},
		{"error-records-agent", false, "records", map[string]any{"episode": "episode-2", "agent": "../bob"}},
		{"error-topk-range", false, "search", map[string]any{"query": "x", "topK": 51}},
		{"error-topk-zero", false, "search", map[string]any{"query": "x", "topK": 0}},
		{"error-topk-type", false, "search", map[string]any{"query": "x", "topK": "ten"}},
		{"error-no-query", false, "search", map[string]any{"episode": "episode-2"}},
		{"error-episode", false, "search", map[string]any{"query": "x", "episode": "2"}},
		{"error-scope", false, "search", map[string]any{"query": "x", "scope": "world"}},
		{"error-agent", false, "search", map[string]any{"query": "x", "agent": "../bob"}},
		{"error-unknown-field", false, "search", map[string]any{"query": "x", "top_k": 3}},
		{"error-read-no-path", false, "read", map[string]any{"startLine": 3}},
		{"error-read-too-many-lines", false, "read", map[string]any{"path": "episode-2/bob/bob.log", "startLine": 10, "endLine": 210}},
		{"error-read-end-before-start", false, "read", map[string]any{"path": "episode-2/bob/bob.log", "startLine": 10, "endLine": 9}},
		{"error-read-beyond-end", false, "read", map[string]any{"path": "episode-2/bob/bob.log", "startLine": 1000}},
		{"error-read-dotdot", false, "read", map[string]any{"path": "episode-2/../../../etc/passwd"}},
		{"error-read-absolute", false, "read", map[string]any{"path": "/etc/passwd"}},
		{"error-read-proc", false, "read", map[string]any{"path": "/proc/self/environ"}},
		{"error-read-no-agent", false, "read", map[string]any{"path": "run-notes.txt"}},
		{"error-read-folder", false, "read", map[string]any{"path": "episode-2/bob"}},
		// "" is absent (spec §5, §14), whatever the argument's type.
		{"search-empty-strings", false, "search", map[string]any{"query": "deploy", "episode": "episode-2", "conversation": "conv-1", "scope": "", "agent": "", "turnMessage": "", "topK": ""}},
		{"records-empty-strings", false, "records", map[string]any{"episode": "episode-2", "conversation": "conv-1", "minLevel": "", "cursor": "", "from": "", "to": "", "agent": "", "limit": ""}},
		{"read-empty-strings", false, "read", map[string]any{"path": "episode-2/bob/bob.log", "startLine": "", "endLine": ""}},
		{"run-info-empty-strings", false, "run_info", map[string]any{"episode": ""}},
		{"error-read-empty-path", false, "read", map[string]any{"path": ""}},
		{"error-records-empty-episode", false, "records", map[string]any{"episode": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := plain
			if tt.rules {
				cs = rules
			}
			res := call(t, cs, tt.tool, tt.args)
			golden(t, tt.name, answer(t, root, res))
		})
	}
}

// answer is what a golden file holds of a result, with the machine's path
// of the run written as $RUN.
func answer(t *testing.T, root string, res *mcp.CallToolResult) any {
	t.Helper()
	var structured any
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), root, "$RUN"))
		if err := json.Unmarshal(data, &structured); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]any{
		"isError":    res.IsError,
		"text":       strings.Split(strings.ReplaceAll(text(res), root, "$RUN"), "\n"),
		"structured": structured,
	}
}

// TestToolList: the tools, their annotations and schemas, as a golden file;
// and every schema acceptable to the strictest clients.
func TestToolList(t *testing.T) {
	cs := start(t, sampleRun(t), startOpts{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tools-list", res.Tools)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v, want read-only, idempotent, not destructive, closed world", tool.Name, a)
		}
		if !strings.Contains(tool.Description, "Call it") && !strings.Contains(tool.Description, "call it") && !strings.Contains(tool.Description, "to see") {
			t.Errorf("%s: the description does not say when to call it: %q", tool.Name, tool.Description)
		}
		for kind, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			data, err := json.Marshal(schema)
			if err != nil {
				t.Fatal(err)
			}
			var tree map[string]any
			if err := json.Unmarshal(data, &tree); err != nil {
				t.Fatal(err)
			}
			if tree["type"] != "object" {
				t.Errorf("%s %s schema: root type %v, want object", tool.Name, kind, tree["type"])
			}
			for _, bad := range strictClientTrouble(tree, "") {
				t.Errorf("%s %s schema: %s", tool.Name, kind, bad)
			}
		}
	}
	if want := []string{"read", "records", "run_info", "search"}; !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// strictClientTrouble lists what some clients reject in a schema: a type
// that is a list (["null", "array"]), and a schema with no type at all (what
// an `any` field gives).
func strictClientTrouble(s map[string]any, at string) []string {
	var out []string
	switch ty := s["type"].(type) {
	case string:
	case nil:
		if s["enum"] == nil && s["$ref"] == nil {
			out = append(out, at+": no type")
		}
	default:
		out = append(out, fmt.Sprintf("%s: type %v", at, ty))
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			out = append(out, strictClientTrouble(p.(map[string]any), at+"."+name)...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, strictClientTrouble(items, at+"[]")...)
	}
	return out
}

// TestBoundedAnswers: on a run of long lines, the largest answers each tool
// can give stay within the bound (texts cut and marked so), far below the
// 25,000 tokens clients accept (taking a token as 4 bytes, 100,000 bytes).
func TestBoundedAnswers(t *testing.T) {
	var notes, wide strings.Builder
	for i := range 60 {
		fmt.Fprintf(&notes, "word%d evidence %s\n", i, strings.Repeat("long text ", 199))
	}
	for range 250 {
		wide.WriteString(strings.Repeat("x", 10<<10) + "\n")
	}
	var log, huge strings.Builder
	for i := range 600 {
		fmt.Fprintf(&log, "2026-10-21 18:%02d:%02d INFO  [running] [conv-1] Alice step %d %s\n", i/60, i%60, i, strings.Repeat("words ", 100))
	}
	huge.WriteString("2026-10-21 18:00:00 [running] [conv-1] Bob pasted a file\n")
	for range 100 {
		huge.WriteString("  " + strings.Repeat("y", 1000) + "\n")
	}
	huge.WriteString("2026-10-21 18:00:01 [running] [conv-1] Bob again\n")
	root := writeRun(t, map[string]string{
		"episode-1/alice/notes.txt": notes.String(),
		"episode-1/alice/wide.txt":  wide.String(),
		"episode-1/alice/alice.log": log.String(),
		"episode-1/bob/bob.history": huge.String(),
	})
	cs := start(t, root, startOpts{})
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": "evidence", "topK": mcpserver.MaxTopK}},
		{"read", map[string]any{"path": "episode-1/alice/wide.txt", "startLine": 1, "endLine": mcpserver.MaxReadLines}},
		{"read", map[string]any{"path": "episode-1/alice/notes.txt", "startLine": 1, "endLine": 60}},
		{"records", map[string]any{"episode": "episode-1", "agent": "bob"}},
		{"records", map[string]any{"episode": "episode-1", "agent": "alice", "limit": mcpserver.MaxRecordsLimit}},
	} {
		res := call(t, cs, tt.tool, tt.args)
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(data) > 100_000 {
			t.Errorf("%s %v: %d bytes (isError %v), want at most 100,000", tt.tool, tt.args, len(data), res.IsError)
		}
		if tt.tool == "records" && tt.args["agent"] == "alice" {
			// Whole records, as many as fit; the cursor reads on.
			if !strings.Contains(text(res), "stopped to bound the answer") || !strings.Contains(string(data), `"stopped":true`) || strings.Contains(string(data), `"cut":true`) {
				t.Errorf("records %v: not stopped with whole records", tt.args)
			}
		} else if !strings.Contains(text(res), "[…]") || !strings.Contains(string(data), `"cut":true`) {
			t.Errorf("%s %v: no text says it was cut", tt.tool, tt.args)
		}
		t.Logf("%s: %d bytes", tt.tool, len(data))
	}
	res := call(t, cs, "search", map[string]any{"query": "evidence text", "topK": mcpserver.MaxTopK})
	var out struct {
		Items []struct {
			Text    string
			Cut     bool
			Matches [][2]int
		}
	}
	remarshal(t, res.StructuredContent, &out)
	if len(out.Items) != mcpserver.MaxTopK {
		t.Errorf("%d items, want %d: cutting texts must not drop pieces", len(out.Items), mcpserver.MaxTopK)
	}
	// A cut text keeps the matches within it, the last one cut with it.
	for _, it := range out.Items {
		units := len(utf16.Encode([]rune(it.Text)))
		if !it.Cut || len(it.Matches) < 2 || it.Matches[len(it.Matches)-1][1] > units {
			t.Fatalf("item cut %v, %d matches, the last %v, its text %d UTF-16 units: want cut, matches within the text", it.Cut, len(it.Matches), it.Matches[len(it.Matches)-1], units)
		}
	}
	read := call(t, cs, "read", map[string]any{"path": "episode-1/alice/wide.txt", "startLine": 1, "endLine": 200})
	if !strings.Contains(text(read), "read on from line") {
		t.Errorf("a read stopped by the bound does not say where to go on:\n%s", text(read)[len(text(read))-300:])
	}
}

func remarshal(t testing.TB, from, to any) {
	t.Helper()
	data, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, to); err != nil {
		t.Fatal(err)
	}
}

// TestHostileInput: unknown tools, hostile paths, links out of the run and a
// 10 MB argument are each a tool error or a JSON-RPC error naming what is
// wrong; the session answers on afterwards and nothing outside is read.
func TestHostileInput(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("zebrasecret outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A record file beside it, for records through the agent folder link.
	if err := os.WriteFile(filepath.Join(filepath.Dir(outside), "bob.log"), []byte("2026-10-21 18:00:00 INFO  [running] [conv-1] zebrasecret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := writeRun(t, map[string]string{"episode-1/alice/notes.txt": "inside note\n"})
	for name, target := range map[string]string{
		"episode-1/alice/out.txt": outside,
		"episode-1/alice/up":      filepath.Dir(outside),
		"episode-1/bob":           filepath.Dir(outside),
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	cs := start(t, root, startOpts{})
	big := strings.Repeat("a", 10<<20)
	for _, tt := range []struct {
		name, tool string
		args       any
		field      string
	}{
		{"link to a file outside", "read", map[string]any{"path": "episode-1/alice/out.txt"}, "path"},
		{"through a folder link", "read", map[string]any{"path": "episode-1/alice/up/outside.txt"}, "path"},
		{"agent folder link", "read", map[string]any{"path": "episode-1/bob/outside.txt"}, "path"},
		{"dot dot", "read", map[string]any{"path": "../" + filepath.Base(filepath.Dir(outside)) + "/outside.txt"}, "path"},
		{"absolute outside", "read", map[string]any{"path": outside}, "path"},
		{"proc", "read", map[string]any{"path": "/proc/self/environ"}, "path"},
		{"10 MB path", "read", map[string]any{"path": big}, "path"},
		{"10 MB query", "search", map[string]any{"query": big + " b"}, ""},
		{"10 MB agent", "search", map[string]any{"query": "note", "agent": big + "/"}, "agent"},
		{"negative line", "read", map[string]any{"path": "episode-1/alice/notes.txt", "startLine": -1}, "startLine"},
		{"huge line", "read", map[string]any{"path": "episode-1/alice/notes.txt", "startLine": 1e300}, "startLine"},
		{"fraction", "search", map[string]any{"query": "note", "topK": 2.5}, "topK"},
		{"arguments not an object", "search", []int{1}, ""},
		{"null argument", "search", map[string]any{"query": nil}, "query"},
		{"10 MB conversation", "records", map[string]any{"episode": "episode-1", "conversation": big}, ""},
		{"10 MB cursor", "records", map[string]any{"episode": "episode-1", "cursor": big}, "cursor"},
		{"10 MB episode", "records", map[string]any{"episode": "episode-" + big}, "episode"},
		{"records agent a link", "records", map[string]any{"episode": "episode-1", "agent": "bob"}, ""},
		{"records agent dot dot", "records", map[string]any{"episode": "episode-1", "agent": ".."}, "agent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			msg := fmt.Sprint(err)
			if err == nil {
				msg = text(res)
				if !res.IsError && tt.field != "" {
					t.Fatalf("answered %q, want a tool error", clipped(msg))
				}
			}
			if strings.Contains(msg, "zebrasecret") {
				t.Fatalf("the answer holds the outside file's text: %q", clipped(msg))
			}
			if len(msg) > 2000 {
				t.Errorf("a %d-byte answer echoes the argument: %q", len(msg), clipped(msg))
			}
			if tt.field != "" && !strings.Contains(msg, tt.field) {
				t.Errorf("%q does not name %s", clipped(msg), tt.field)
			}
		})
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_everything", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "delete_everything") {
		t.Errorf("an unknown tool: %v, want a JSON-RPC error naming it", err)
	}
	if res := call(t, cs, "read", map[string]any{"path": "episode-1/alice/notes.txt"}); res.IsError || !strings.Contains(text(res), "inside note") {
		t.Errorf("after the hostile calls, a read answers %q", text(res))
	}
}

func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestRecordsToolPages: following the cursors, pages of any size together
// are the one big answer.
func TestRecordsToolPages(t *testing.T) {
	cs := start(t, sampleRun(t), startOpts{})
	type page struct {
		Records []map[string]any
		Cursor  string
		Stopped bool
	}
	for _, args := range []map[string]any{
		{"episode": "episode-2"},
		{"episode": "episode-2", "conversation": "conv-1"},
		{"episode": "episode-2", "minLevel": "INFO", "agent": "alice"},
	} {
		var whole page
		big := map[string]any{"limit": mcpserver.MaxRecordsLimit}
		for k, v := range args {
			big[k] = v
		}
		remarshal(t, call(t, cs, "records", big).StructuredContent, &whole)
		if len(whole.Records) < 3 || whole.Cursor != "" {
			t.Fatalf("%v: %d records, cursor %q", args, len(whole.Records), whole.Cursor)
		}
		for _, limit := range []int{1, 2, 5} {
			var got []map[string]any
			a := map[string]any{"limit": limit}
			for k, v := range args {
				a[k] = v
			}
			for {
				var p page
				res := call(t, cs, "records", a)
				remarshal(t, res.StructuredContent, &p)
				got = append(got, p.Records...)
				if p.Cursor == "" {
					break
				}
				if !strings.Contains(text(res), p.Cursor) {
					t.Errorf("the text does not give the cursor:\n%s", text(res))
				}
				a["cursor"] = p.Cursor
			}
			if fmt.Sprint(got) != fmt.Sprint(whole.Records) {
				t.Errorf("%v in pages of %d:\n%v\nwant\n%v", args, limit, got, whole.Records)
			}
		}
	}
}
