package lsp_test

import (
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"runls/lsp"
	"runls/retriever"
)

// distinctTerms returns a query of n distinct terms.
func distinctTerms(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(" t")
		b.WriteString(strconv.FormatInt(int64(i), 36))
	}
	return b.String()
}

// TestQueryOfManyTerms: a query of 100,000 distinct terms (issue 8) is
// refused with -32602 naming query, by run/search and by workspace/symbol
// alike, on the real engine; a query of retriever.MaxQueryTerms distinct terms
// and one of 100,000 repetitions of a word are answered.
//
// workspace/symbol refuses rather than caps: spec §9 gives symbols the
// ranking of §6 with no cap of terms, so ranking the first 1024 would answer
// another query than the one typed, without a word; an editor shows the
// error (Neovim) or logs it and shows no symbols (VS Code), which is what a
// query no run can rank deserves. Only a paste makes such a query.
func TestQueryOfManyTerms(t *testing.T) {
	root := sampleRun(t)
	c := start(t, startOpts{})
	c.initialize(root, false, nil)
	c.waitIndexed()
	huge := distinctTerms(100000) + " deploy"
	searches := []struct {
		method string
		params map[string]any
	}{
		{lsp.MethodRunSearch, map[string]any{"query": huge}},
		{lsp.MethodRunSearch, map[string]any{"turnMessage": huge, "episode": "episode-2", "conversation": "conv-1"}},
		{protocol.MethodWorkspaceSymbol, map[string]any{"query": huge}},
	}
	for _, s := range searches {
		err := c.call(s.method, s.params, nil)
		if codeOf(err) != jsonrpc2.InvalidParams {
			t.Errorf("%s of 100,000 terms: %v, want code -32602", s.method, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "query") || !strings.Contains(msg, "100001 terms") ||
			!strings.Contains(msg, strconv.Itoa(retriever.MaxQueryTerms)) || strings.Contains(msg, "\n") {
			t.Errorf("%s of 100,000 terms: error %q, want one line naming query, the count and the limit", s.method, msg)
		}
	}

	for _, q := range []string{distinctTerms(retriever.MaxQueryTerms-1) + " deploy", strings.Repeat("deploy ", 100000)} {
		var res retriever.Result
		if err := c.call(lsp.MethodRunSearch, map[string]any{"query": q}, &res); err != nil {
			t.Errorf("run/search of %d bytes within the limit: %v", len(q), err)
		} else if len(res.Items) == 0 {
			t.Errorf("run/search of %d bytes within the limit found nothing", len(q))
		}
		var syms []protocol.SymbolInformation
		if err := c.call(protocol.MethodWorkspaceSymbol, map[string]any{"query": q}, &syms); err != nil {
			t.Errorf("workspace/symbol of %d bytes within the limit: %v", len(q), err)
		} else if len(syms) == 0 {
			t.Errorf("workspace/symbol of %d bytes within the limit found nothing", len(q))
		}
	}
	if err := c.shutdownExit(); err != nil {
		t.Errorf("Serve = %v", err)
	}
}
