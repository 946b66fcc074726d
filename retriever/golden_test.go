package retriever

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenSearches runs requests on the sample run and compares the
// run/search results with golden files (go test -run Golden -update rewrites them).
func TestGoldenSearches(t *testing.T) {
	sample, err := filepath.Abs(filepath.Join("..", "testdata", "sample-run"))
	must(t, err)
	rules := mustRules(t)
	tests := []struct {
		name   string
		rules  bool
		req    Request
		symbol bool
	}{
		{name: "deploy-episode2-conv1", req: Request{Query: "deploy database migration", Episode: "episode-2", Conversation: "conv-1"}},
		{name: "deploy-no-context", req: Request{Query: "deploy database migration"}},
		{name: "hotel-scope-episode", req: Request{Query: "hotel booking Lisbon", Episode: "episode-2", Conversation: "conv-2", Scope: "episode", TopK: 10}},
		{name: "hotel-agent-bob", req: Request{Query: "hotel booking flights", Agent: "bob", Episode: "episode-3", Conversation: "conv-3", TopK: 10}},
		{name: "pre-0.18.6-current", req: Request{Query: "migration billing", Episode: "episode-1", Conversation: "conv-1", TopK: 20}},
		{name: "interpreter-turn-message", rules: true, req: Request{TurnMessage: "Deploy the billing service once the database migration passes.", Episode: "episode-2", Conversation: "conv-1", TopK: 10}},
		{name: "interpreter-said-once", rules: true, req: Request{Query: "wait for Bob's migration", Episode: "episode-3", Conversation: "conv-1", TopK: 10}},
		{name: "unicode", req: Request{Query: "café naïve", Episode: "episode-2", Conversation: "conv-1"}},
		{name: "stack-trace", req: Request{Query: "IllegalStateException migration lock", Episode: "episode-3", Conversation: "conv-4", TopK: 10}},
		{name: "quokka-nowhere", req: Request{Query: "quokka", Episode: "episode-2", Conversation: "conv-1"}},
		{name: "symbols-migration", symbol: true, req: Request{Query: "migration failed"}},
	}
	plain := openTest(t, Options{Root: sample})
	withRules := openTest(t, Options{Root: sample, Interpreter: rules})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := plain
			if tt.rules {
				ix = withRules
			}
			var res Result
			var err error
			if tt.symbol {
				res, err = ix.Symbols(context.Background(), tt.req.Query, 10)
			} else {
				res, err = ix.Search(context.Background(), tt.req)
			}
			must(t, err)
			got, err := json.MarshalIndent(res, "", "  ")
			must(t, err)
			got = bytes.ReplaceAll(got, []byte(strings.TrimPrefix(FileURI(ix.Root()), "file://")), []byte("$RUN"))
			got = append(got, '\n')
			checkGolden(t, filepath.Join("testdata", "golden", tt.name+".json"), got)
		})
	}
}

// checkGolden compares got with the golden file at path, or writes it with
// -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n%s", path, strings.SplitN(t.Name(), "/", 2)[0], got)
	}
}
