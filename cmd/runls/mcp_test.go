package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/retriever"
)

// piece is what a search hit is, to compare the answers of runls mcp and
// runls search --json: the file, the line, the text and the score.
type piece struct {
	Path  string
	Line  int
	Text  string
	Score float64
}

// TestMCPEndToEnd builds the binary, starts `runls mcp` through the SDK's
// CommandTransport, and checks that search answers what `runls search
// --json` answers for the same request (the same pieces in the same order),
// with masking off and on, and that read and run_info answer.
func TestMCPEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := copySample(t)
	secret := "AKIAENDTOEND0SECRET1"
	if err := os.WriteFile(filepath.Join(run, "episode-2", "bob", "keys.txt"), []byte("the deploy key is "+secret+" for the database migration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	history := filepath.Join(run, "episode-2", "bob", "bob.history")
	f, err := os.OpenFile(history, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(f, "2026-10-21 18:30:00 [running] [conv-1] Bob noted the key %s\n  for the bucket\n", secret); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(testdata(t), "interpreter.json")
	requests := []retriever.Request{
		{Query: "deploy database migration"},
		{Query: "deploy database migration", Episode: "episode-2", Conversation: "conv-1", TopK: 20},
		{Query: "Deploy the billing service once the database migration passes.", Episode: "episode-2", Conversation: "conv-1", TopK: 50},
		{Query: "hotel booking flights", Agent: "carol", Episode: "episode-3", Conversation: "conv-2", Scope: "episode"},
		{Query: "deploy key " + secret, Episode: "episode-2", Conversation: "conv-1"},
	}
	for name, mode := range map[string][]string{"plain": {}, "interpreter": {"--interpreter", rules}, "masked": {"--mask", "--interpreter", rules}} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			// Flags before the run folder, and after it (spec §14), as MCP
			// clients' configurations put them.
			argv := append(append([]string{"mcp"}, mode...), run)
			if name == "masked" {
				argv = append([]string{"mcp", run}, mode...)
			}
			cmd := exec.Command(bin, argv...)
			cmd.Stderr = &stderr
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := cs.Close(); err != nil {
					t.Errorf("closing the session: %v (stderr: %s)", err, stderr.String())
				}
			}()
			masked := len(mode) > 0 && mode[0] == "--mask"
			for _, req := range requests {
				args := map[string]any{}
				flags := append([]string{"search", "--json"}, mode...)
				for name, v := range map[string]string{"query": req.Query, "agent": req.Agent, "episode": req.Episode, "conversation": req.Conversation, "scope": req.Scope} {
					if v != "" {
						args[name] = v
					}
				}
				for flag, v := range map[string]string{"--agent": req.Agent, "--episode": req.Episode, "--conversation": req.Conversation, "--scope": req.Scope} {
					if v != "" {
						flags = append(flags, flag, v)
					}
				}
				if req.TopK != 0 {
					args["topK"] = req.TopK
				}
				// runls search --top-k K; its default is 5, the tool's 10.
				flags = append(flags, "--top-k", fmt.Sprint(max(req.TopK, 10)), run, req.Query)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("search %v: %v %+v", args, err, res)
				}
				var got struct {
					Items []struct {
						Location struct {
							Path string
							Line int
						}
						Text  string
						Score float64
					}
				}
				remarshal(t, res.StructuredContent, &got)
				var gotPieces []piece
				for _, it := range got.Items {
					gotPieces = append(gotPieces, piece{it.Location.Path, it.Location.Line, it.Text, it.Score})
				}
				want := cliPieces(t, run, flags)
				if fmt.Sprint(gotPieces) != fmt.Sprint(want) {
					t.Errorf("search %v:\n mcp    %v\n search %v", args, gotPieces, want)
				}
				if len(want) == 0 {
					t.Errorf("search %v found nothing: the comparison says little", args)
				}
				lines := strings.Split(strings.TrimSpace(textOf(res)), "\n")
				for i, p := range gotPieces {
					if want := fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Text); i >= len(lines) || lines[i] != want {
						t.Errorf("text line %d: %q, want %q", i, lines[min(i, len(lines)-1)], want)
					}
				}
				data, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				if has := strings.Contains(string(data), secret); masked && has {
					t.Errorf("masked, search %v answers the secret", args)
				} else if !masked && strings.Contains(req.Query, secret) && !has {
					t.Errorf("unmasked, search %v does not find the secret: the masked case says little", args)
				}
			}
			checkRecordsEqual(t, cs, run, masked, secret)
			read, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "episode-2/bob/keys.txt"}})
			if err != nil || read.IsError || masked == strings.Contains(textOf(read), secret) || !strings.Contains(textOf(read), "deploy key") {
				t.Errorf("read: %v %s", err, textOf(read))
			}
			info, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_info", Arguments: map[string]any{}})
			if err != nil || info.IsError || !strings.Contains(textOf(info), "episode-2: agents alice, bob, carol; conversations conv-1, conv-2, conv-3") {
				t.Errorf("run_info: %v %s", err, textOf(info))
			}
		})
	}
}

// checkRecordsEqual: the records tool answers what `runls records --json`
// answers for the same request (the same records in the same order, every
// field, and the same cursor); no interpreter rule applies to either.
func checkRecordsEqual(t *testing.T, cs *mcp.ClientSession, run string, masked bool, secret string) {
	t.Helper()
	type record struct {
		Path, Time, Level, State, Conversation, Agent, Episode, Text string
		Line, EndLine                                                int
	}
	real, err := filepath.EvalSymlinks(run)
	if err != nil {
		t.Fatal(err)
	}
	sawSecret := false
	for _, args := range []map[string]any{
		{"episode": "episode-2", "conversation": "conv-1", "limit": 5},
		{"episode": "episode-2", "conversation": "conv-1"},
		{"episode": "episode-2"},
		{"episode": "episode-3", "agent": "carol", "minLevel": "INFO"},
		{"episode": "episode-2", "conversation": "-", "from": "2026-10-21 18:00:00", "to": "2026-10-21 18:06:00"},
		{"episode": "episode-1", "limit": 2},
	} {
		flags := []string{"records", "--json"}
		if masked {
			flags = append(flags, "--mask")
		}
		for name, flag := range map[string]string{"conversation": "--conversation", "agent": "--agent", "minLevel": "--min-level", "from": "--from", "to": "--to"} {
			if v, ok := args[name]; ok {
				flags = append(flags, flag, v.(string))
			}
		}
		limit, ok := args["limit"].(int)
		if !ok {
			limit = 100 // the tool's default; runls records' is 1000
		}
		flags = append(flags, "--limit", fmt.Sprint(limit), run, args["episode"].(string))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "records", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("records %v: %v %s", args, err, textOf(res))
		}
		var got struct {
			Records []struct {
				Location struct {
					Path          string
					Line, EndLine int
				}
				Time, Level, State, Conversation, Agent, Episode, Text string
			}
			Cursor string
		}
		remarshal(t, res.StructuredContent, &got)
		var gotRecs []record
		for _, r := range got.Records {
			gotRecs = append(gotRecs, record{r.Location.Path, r.Time, r.Level, r.State, r.Conversation, r.Agent, r.Episode, r.Text, r.Location.Line, r.Location.EndLine})
		}
		var out, errb bytes.Buffer
		if code := runIn(flags, &out, &errb); code != exitFound {
			t.Fatalf("runls %v: exit %d: %s", flags, code, errb.String())
		}
		var cli retriever.RecordsResult
		if err := json.Unmarshal(out.Bytes(), &cli); err != nil {
			t.Fatal(err)
		}
		var want []record
		or := func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		}
		for _, r := range cli.Records {
			rel, err := filepath.Rel(real, retriever.PathOfURI(r.Location.URI))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, record{filepath.ToSlash(rel), or(r.Time), or(r.Level), r.State, or(r.Conversation), r.Agent, r.Episode, r.Text,
				r.Location.Range.Start.Line + 1, r.Location.Range.End.Line + 1})
		}
		if fmt.Sprint(gotRecs) != fmt.Sprint(want) || got.Cursor != or(cli.Cursor) {
			t.Errorf("records %v:\n mcp     %v %q\n records %v %q", args, gotRecs, got.Cursor, want, or(cli.Cursor))
		}
		if len(want) == 0 {
			t.Errorf("records %v listed nothing: the comparison says little", args)
		}
		lines := strings.Split(strings.TrimSpace(textOf(res)), "\n")
		if len(lines) < len(gotRecs) || !strings.HasPrefix(lines[0], fmt.Sprintf("%s:%d: ", gotRecs[0].Path, gotRecs[0].Line)) {
			t.Errorf("records %v text: %q", args, lines[0])
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(data), secret)
		sawSecret = sawSecret || has
		if masked && has {
			t.Errorf("masked, records %v answers the secret", args)
		}
	}
	if !masked && !sawSecret {
		t.Errorf("unmasked, no records answer holds the secret: the masked case says little")
	}
}

// cliPieces runs `runls search` in-process and returns its hits as pieces.
func cliPieces(t *testing.T, run string, args []string) []piece {
	t.Helper()
	var out, errb bytes.Buffer
	code := runIn(args, &out, &errb)
	if code == exitError {
		t.Fatalf("runls %v: exit %d: %s", args, code, errb.String())
	}
	var res struct {
		Items []struct {
			Location retriever.Location
			Text     string
			Score    float64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(run)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []piece
	for _, it := range res.Items {
		rel, err := filepath.Rel(real, retriever.PathOfURI(it.Location.URI))
		if err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, piece{filepath.ToSlash(rel), it.Location.Range.Start.Line + 1, it.Text, it.Score})
	}
	return pieces
}

func runIn(args []string, stdout, stderr *bytes.Buffer) int {
	return run(context.Background(), args, strings.NewReader(""), stdout, stderr)
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
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

// TestMCPOneShotPipe: the binary given its requests on a pipe that ends
// right after them, garbage among them, answers every request and exits 0.
func TestMCPOneShotPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", filepath.Join(testdata(t), "sample-run"))
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
not json at all
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"deploy","episode":"episode-2","conversation":"conv-1"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"/proc/self/environ"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_info","arguments":{}}}
`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("runls mcp: %v\n%s", err, stderr.String())
	}
	answers := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m struct {
			ID     any
			Result *mcp.CallToolResult
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		switch {
		case m.Error != nil:
			answers[fmt.Sprint(m.ID)] = fmt.Sprint("error ", m.Error.Code)
		case m.Result != nil && m.Result.IsError:
			answers[fmt.Sprint(m.ID)] = "tool error"
		default:
			answers[fmt.Sprint(m.ID)] = "result"
		}
	}
	want := map[string]string{"1": "result", "<nil>": "error -32700", "2": "result", "3": "tool error", "4": "result"}
	if fmt.Sprint(answers) != fmt.Sprint(want) {
		t.Errorf("answers %v, want %v", answers, want)
	}
}

// TestMCPBadFlags: bad flags exit 2 with the usage, before anything is served.
func TestMCPBadFlags(t *testing.T) {
	for _, args := range [][]string{{"mcp"}, {"mcp", "--nope", "x"}, {"mcp", "x", "--nope"}, {"mcp", "a", "b"}, {"mcp", "a", "--mask", "b"}, {"mcp", "/no/such/run"}, {"mcp", "--interpreter", "/no/rules.json", "."}} {
		var out, errb bytes.Buffer
		if code := runIn(args, &out, &errb); code != exitError || out.Len() != 0 || !strings.HasPrefix(errb.String(), "runls: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
}
