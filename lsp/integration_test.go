package lsp_test

// Tests against the real engine on a copy of testdata/sample-run: the server
// must answer exactly what the engine answers for the same request.

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/masking"
	"runls/retriever"
)

// copyRun copies a folder of the repository's testdata into a temporary folder.
func copyRun(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func sampleRun(t testing.TB) string { return copyRun(t, filepath.Join("..", "testdata", "sample-run")) }

// openIndex opens the engine directly, as the oracle of the server's answers.
func openIndex(t testing.TB, opts retriever.Options) *retriever.Index {
	t.Helper()
	ix, err := retriever.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func canonical(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.MarshalIndent(x, "", " ")
	return string(b)
}

func TestSearchEqualsEngine(t *testing.T) {
	root := sampleRun(t)
	interpPath := filepath.Join("..", "testdata", "interpreter.json")
	absInterp, _ := filepath.Abs(interpPath)
	rules, err := os.ReadFile(interpPath)
	if err != nil {
		t.Fatal(err)
	}
	interp, err := retriever.ParseInterpreter(rules)
	if err != nil {
		t.Fatal(err)
	}
	var rulesObj any
	_ = json.Unmarshal(rules, &rulesObj)

	tests := []struct {
		name     string
		settings map[string]any
		opts     retriever.Options // of the oracle, Root aside
		params   map[string]any
		want     retriever.Request // what the oracle is asked
		noted    bool              // the result has hidden counts or notices
	}{
		{name: "with episode and conversation",
			params: map[string]any{"query": "deploy database migration", "episode": "episode-2", "conversation": "conv-1"},
			want:   retriever.Request{Query: "deploy database migration", Episode: "episode-2", Conversation: "conv-1"}},
		{name: "no context: plain files only",
			params: map[string]any{"query": "deploy database migration"},
			want:   retriever.Request{Query: "deploy database migration"}},
		{name: "one agent, topK",
			params: map[string]any{"query": "hotel booking", "agent": "bob", "topK": 20, "episode": "episode-3", "conversation": "conv-2"},
			want:   retriever.Request{Query: "hotel booking", Agent: "bob", TopK: 20, Episode: "episode-3", Conversation: "conv-2"}},
		{name: "scope episode from settings",
			settings: map[string]any{"episode": "episode-2", "conversation": "conv-2", "scope": "episode", "topK": 50},
			params:   map[string]any{"query": "hotel booking"},
			want:     retriever.Request{Query: "hotel booking", Episode: "episode-2", Conversation: "conv-2", Scope: "episode", TopK: 50}},
		{name: "every conversation, and what the run does not hold",
			params: map[string]any{"query": "hotel booking", "agent": "Alice", "episode": "episode-2", "conversation": "conv-9", "allConversations": true},
			want:   retriever.Request{Query: "hotel booking", Agent: "Alice", Episode: "episode-2", Conversation: "conv-9", AllConversations: true}, noted: true},
		{name: "hidden by the conversation",
			params: map[string]any{"query": "hotel booking", "episode": "episode-2", "conversation": "conv-1"},
			want:   retriever.Request{Query: "hotel booking", Episode: "episode-2", Conversation: "conv-1"}, noted: true},
		{name: "nothing outside agent folders",
			params: map[string]any{"query": "quokka", "episode": "episode-2", "conversation": "conv-1"},
			want:   retriever.Request{Query: "quokka", Episode: "episode-2", Conversation: "conv-1"}},
		{name: "UTF-16 ranges",
			params: map[string]any{"query": "café crème naïve", "topK": 10},
			want:   retriever.Request{Query: "café crème naïve", TopK: 10}},
		{name: "interpreter as an object, turn message",
			settings: map[string]any{"interpreter": rulesObj, "episode": "episode-2", "conversation": "conv-1"},
			opts:     retriever.Options{Interpreter: interp},
			params:   map[string]any{"turnMessage": "Deploy the billing service once the database migration passes.", "topK": 30},
			want:     retriever.Request{TurnMessage: "Deploy the billing service once the database migration passes.", Episode: "episode-2", Conversation: "conv-1", TopK: 30}},
		{name: "interpreter as a path",
			settings: map[string]any{"interpreter": absInterp},
			opts:     retriever.Options{Interpreter: interp},
			params:   map[string]any{"query": "migration", "episode": "episode-3", "conversation": "conv-4", "topK": 30},
			want:     retriever.Request{Query: "migration", Episode: "episode-3", Conversation: "conv-4", TopK: 30}},
		{name: "masking hidingOutside",
			settings: map[string]any{"masking": "hidingOutside"},
			opts:     retriever.Options{Masker: masking.HidingOutside(root)},
			params:   map[string]any{"query": "path home token secret key", "episode": "episode-3", "conversation": "conv-4", "topK": 50},
			want:     retriever.Request{Query: "path home token secret key", Episode: "episode-3", Conversation: "conv-4", TopK: 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, startOpts{})
			c.initialize(root, false, tt.settings)
			c.waitIndexed()
			var got retriever.Result
			c.mustCall(lsp.MethodRunSearch, tt.params, &got)

			o := tt.opts
			o.Root = root
			want, err := openIndex(t, o).Search(context.Background(), tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := canonical(t, got), canonical(t, want); g != w {
				t.Errorf("run/search differs from Index.Search:\n got %s\nwant %s", g, w)
			}
			if noted := got.Hidden.Total() > 0 || len(got.Notices) > 0; tt.noted && !noted {
				t.Errorf("hidden %+v, notices %+v", got.Hidden, got.Notices)
			}
			if err := c.shutdownExit(); err != nil {
				t.Errorf("Serve = %v", err)
			}
		})
	}
}

func TestSearchInvalidFieldsReal(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	tests := []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"query": "q", "episode": "ep-1"}, "episode"},
		{map[string]any{"query": "q", "episode": "episode--1"}, "episode"},
		{map[string]any{"query": "q", "scope": "all"}, "scope"},
		{map[string]any{"query": "q", "topK": 1001}, "topK"},
		{map[string]any{"query": "q", "topK": -1}, "topK"},
		{map[string]any{"query": "q", "agent": "a/b"}, "agent"},
		{map[string]any{"query": "q", "agent": ".."}, "agent"},
	}
	for _, tt := range tests {
		err := c.call(lsp.MethodRunSearch, tt.params, nil)
		if codeOf(err) != jsonrpc2.InvalidParams {
			t.Errorf("%v: %v, want code -32602", tt.params, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%v: error %q does not name %s", tt.params, err, tt.field)
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestInfoAndSymbolsEqualEngine(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	c.initialize(root, true, nil)
	ix := openIndex(t, retriever.Options{Root: root})
	ctx := context.Background()

	// run/info after indexing.
	c.waitIndexed()
	var got retriever.Info
	c.mustCall(lsp.MethodRunInfo, map[string]any{}, &got)
	if _, err := ix.Refresh(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want, err := ix.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := canonical(t, got), canonical(t, want); g != w {
		t.Errorf("run/info differs from Index.Info:\n got %s\nwant %s", g, w)
	}
	if !got.Indexing.Done {
		t.Errorf("run/info says indexing is not done after a search")
	}

	for _, query := range []string{"migration", "hotel booking", "quokka", ""} {
		var syms []protocol.SymbolInformation
		c.mustCall(protocol.MethodWorkspaceSymbol, map[string]any{"query": query}, &syms)
		res, err := ix.Symbols(ctx, query, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(syms) != len(res.Items) {
			t.Errorf("%q: %d symbols, engine %d", query, len(syms), len(res.Items))
			continue
		}
		for i, it := range res.Items {
			s := syms[i]
			if string(s.Location.URI) != it.Location.URI || int(s.Location.Range.Start.Line) != it.Location.Range.Start.Line ||
				int(s.Location.Range.Start.Character) != it.Location.Range.Start.Character ||
				int(s.Location.Range.End.Character) != it.Location.Range.End.Character {
				t.Errorf("%q #%d: symbol at %+v, engine %+v", query, i, s.Location, it.Location)
			}
			if !strings.Contains(s.ContainerName, it.Episode) || !strings.Contains(s.ContainerName, it.Agent) {
				t.Errorf("%q #%d: containerName %q lacks %s and %s", query, i, s.ContainerName, it.Episode, it.Agent)
			}
		}
		if query == "migration" && len(syms) == 0 {
			t.Errorf("no symbols for %q", query)
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestDiagnosticsReal(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	ix := openIndex(t, retriever.Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	// Every record file with diagnostics gets the engine's, as LSP diagnostics.
	withDiags := 0
	for _, f := range ix.RecordFiles() {
		want := ix.Diagnostics(f, 0)
		if len(want) == 0 {
			continue
		}
		withDiags++
		p := c.publishedFor(retriever.FileURI(f), count(len(want)))
		for i, d := range p.Diagnostics {
			w := want[i]
			if d.Code != w.Code || d.Message != w.Message || canonical(t, d.Range) != canonical(t, w.Range) ||
				int(d.Severity) != int(w.Severity) || d.Source != "runls" {
				t.Errorf("%s #%d: %+v, engine %+v", f, i, d, w)
			}
		}
	}
	if withDiags == 0 {
		t.Fatal("the sample run has no diagnostics: the test tests nothing")
	}
	// Grouped: a file written before 0.18.6 gets one Information over it.
	pre := c.publishedFor(retriever.FileURI(filepath.Join(root, "episode-1", "alice", "alice.history")), count(1))
	if d := pre.Diagnostics[0]; d.Severity != protocol.DiagnosticSeverityInformation || d.Code != retriever.CodeUnfieldedLine ||
		d.Range.Start != (protocol.Position{}) || d.Range.End.Line != 7 {
		t.Errorf("pre-0.18.6 file: %+v", d)
	}

	// An appended unfielded record is published; fixing the file clears it.
	file := filepath.Join(root, "episode-3", "carol", "carol.history")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before := len(ix.Diagnostics(file, 0))
	// Not ASCII, so that UTF-16 columns differ from byte columns.
	added := "2026-10-22 09:00:00 [running] carol wrote this line without a conversation 😀 naïve"
	appendLine(t, file, added+"\n")
	p := c.publishedFor(retriever.FileURI(file), count(before+1))
	last := p.Diagnostics[len(p.Diagnostics)-1]
	if want := uint32(len(utf16.Encode([]rune(added)))); last.Range.End.Character != want || want == uint32(len(added)) ||
		last.Severity != protocol.DiagnosticSeverityWarning || !strings.Contains(last.Message, "1 record without the conversation field") {
		t.Errorf("diagnostic of the appended record %+v, want it to end at character %d (UTF-16; %d bytes)", last, want, len(added))
	}
	// A second unfielded record right after it joins its run: still one.
	appendLine(t, file, added+" again\n")
	p = c.publishedFor(retriever.FileURI(file), func(p published) bool {
		return len(p.Diagnostics) == before+1 && strings.Contains(p.Diagnostics[before].Message, "2 records without")
	})
	m := c.mark()
	if err := os.WriteFile(file+".tmp", orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		t.Fatal(err)
	}
	c.publishedAfter(m, retriever.FileURI(file), count(before))

	// A deleted file's diagnostics are cleared.
	gone := filepath.Join(root, "episode-1", "alice", "alice.history")
	if len(ix.Diagnostics(gone, 0)) == 0 {
		t.Fatalf("%s has no diagnostics to clear", gone)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	c.publishedFor(retriever.FileURI(gone), count(0))

	// A smaller cap re-publishes, the last warning saying how many more; the
	// stack trace's Hint does not count against it (spec §9, revision 3).
	big := filepath.Join(root, "episode-2", "bob", "bob.log")
	for i := 0; i < 3; i++ {
		appendLine(t, big, "2026-10-21 18:20:00.000 ERROR [running] [conv-1] Bob failed again\nwritten without the indent\n")
	}
	c.publishedFor(retriever.FileURI(big), count(4))
	changeSettings(c, map[string]any{"maxDiagnosticsPerFile": 2})
	p = c.publishedFor(retriever.FileURI(big), count(3))
	if p.Diagnostics[0].Severity != protocol.DiagnosticSeverityHint || p.Diagnostics[2].Code != retriever.CodeMore {
		t.Errorf("capped diagnostics %+v: want the Hint, one warning, then %s", p.Diagnostics, retriever.CodeMore)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func appendLine(t testing.TB, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

func TestNotARunFolderReal(t *testing.T) {
	c := start(t, startOpts{})
	c.initialize(t.TempDir(), false, nil)
	msg := c.waitFor("window/showMessage", method(protocol.MethodWindowShowMessage))
	if !strings.Contains(string(msg.params), "not a run folder") {
		t.Errorf("showMessage = %s", msg.params)
	}
	var res retriever.Result
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "x"}, &res)
	if res.Items == nil || len(res.Items) != 0 {
		t.Errorf("run/search = %+v", res)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestBecomesRunFolder: a workspace opened before the run wrote its first
// episode folder is served once it has one.
func TestBecomesRunFolder(t *testing.T) {
	root := t.TempDir()
	c := start(t, startOpts{pollInterval: 20 * time.Millisecond})
	c.initialize(root, false, nil)
	c.waitFor("window/showMessage", method(protocol.MethodWindowShowMessage))
	dir := filepath.Join(root, "episode-1", "alice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the quokka was seen at dawn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		var res retriever.Result
		c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "quokka"}, &res)
		if len(res.Items) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new run folder was never served")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestURIsAsVSCodeWritesThem: in a folder whose name holds a space, "@" and
// ":", the URIs the server publishes are written as VS Code writes them, and
// a didOpen with such a URI finds its file.
func TestURIsAsVSCodeWritesThem(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "runs @home:1")
	root := copyRun(t, filepath.Join("..", "testdata", "sample-run"))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(parent, "run")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(moved, "episode-1", "alice", "alice.history")
	const want = "/runs%20%40home%3A1/run/episode-1/alice/alice.history"

	c := start(t, startOpts{})
	c.initialize(moved, false, nil)
	c.waitIndexed()
	p := c.publishedFor(retriever.FileURI(file), func(p published) bool { return len(p.Diagnostics) > 0 })
	if !strings.HasSuffix(p.URI, want) {
		t.Errorf("published URI %s, want it to end with %s", p.URI, want)
	}
	m := c.mark()
	c.notify(protocol.MethodTextDocumentDidOpen, map[string]any{"textDocument": map[string]any{
		"uri": p.URI, "languageId": "runls-history", "version": 1, "text": "",
	}})
	c.publishedAfter(m, p.URI, func(q published) bool { return len(q.Diagnostics) == len(p.Diagnostics) })

	var res retriever.Result
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "hotel booking", "topK": 3}, &res)
	for _, it := range res.Items {
		if !strings.Contains(it.Location.URI, "/runs%20%40home%3A1/run/") {
			t.Errorf("run/search URI %s is not written as VS Code writes it", it.Location.URI)
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// completeSearch asks run/search until its answer is complete: one asked
// while a settings change's re-index runs may be a partial answer that says
// so (its indexing notice, docs/partial.md), as it is once the index takes
// longer than the grace (1.6 s of a loaded CI's -race run once).
func completeSearch(c *client, params map[string]any) retriever.Result {
	c.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var got retriever.Result
		c.mustCall(lsp.MethodRunSearch, params, &got)
		partial := slices.ContainsFunc(got.Notices, func(n retriever.Notice) bool { return n.Field == retriever.IndexingField })
		if !partial {
			return got
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run/search still partial after %v: %+v", waitTimeout, got.Notices)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConfigurationChangeReal: a new interpreter and masking re-index, and
// the answers change to what an index opened with them gives.
func TestConfigurationChangeReal(t *testing.T) {
	root := sampleRun(t)
	rules, err := os.ReadFile(filepath.Join("..", "testdata", "interpreter.json"))
	if err != nil {
		t.Fatal(err)
	}
	interp, err := retriever.ParseInterpreter(rules)
	if err != nil {
		t.Fatal(err)
	}
	var rulesObj any
	_ = json.Unmarshal(rules, &rulesObj)
	turn := "Deploy the billing service once the database migration passes."
	req := retriever.Request{TurnMessage: turn, Episode: "episode-2", Conversation: "conv-1", TopK: 40}
	params := map[string]any{"turnMessage": turn, "episode": "episode-2", "conversation": "conv-1", "topK": 40}

	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	steps := []struct {
		name     string
		settings map[string]any
		opts     retriever.Options
	}{
		{"no interpreter", map[string]any{}, retriever.Options{}},
		{"interpreter", map[string]any{"interpreter": rulesObj}, retriever.Options{Interpreter: interp}},
		{"interpreter and masking", map[string]any{"interpreter": rulesObj, "masking": "hidingOutside"},
			retriever.Options{Interpreter: interp, Masker: masking.HidingOutside(root)}},
		{"back to none", map[string]any{}, retriever.Options{}},
	}
	var prev string
	for i, st := range steps {
		if i > 0 {
			changeSettings(c, st.settings)
		}
		got := completeSearch(c, params)
		o := st.opts
		o.Root = root
		want, err := openIndex(t, o).Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		g := canonical(t, got)
		if w := canonical(t, want); g != w {
			t.Errorf("%s: run/search differs from Index.Search:\n got %s\nwant %s", st.name, g, w)
		}
		if i == 1 && g == prev {
			t.Errorf("%s: the interpreter changed nothing: the test tests nothing", st.name)
		}
		prev = g
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestEngineWarningsReal: the WARNs of spec §1 (a link to outside the run)
// and §5 (unfielded lines in the current episode) reach the client as
// window/logMessage.
func TestEngineWarningsReal(t *testing.T) {
	root := sampleRun(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("outside the run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "episode-2", "alice", "link.txt")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	logged := func(what string) func(note) bool {
		return func(n note) bool {
			return n.method == protocol.MethodWindowLogMessage && strings.Contains(string(n.params), what)
		}
	}
	c.waitFor("a logMessage naming the link", logged("link.txt"))
	c.mustCall(lsp.MethodRunSearch, map[string]any{"query": "hotel", "episode": "episode-1", "conversation": "conv-1"}, nil)
	c.waitFor("a logMessage naming an unfielded file of episode-1", logged("episode-1/alice/alice.history"))
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
