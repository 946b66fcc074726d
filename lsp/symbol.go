package lsp

import (
	"context"
	"path"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"runls/retriever"
)

// maxSymbolName is how many characters of a piece a symbol's name shows.
const maxSymbolName = 100

// Symbols answers workspace/symbol: the query ranked against every indexed
// piece, without the request filters (spec §9).
func (h handlers) Symbols(ctx context.Context, params *protocol.WorkspaceSymbolParams) ([]protocol.SymbolInformation, error) {
	s := h.s
	// Answered after the grace from what is indexed, as run/search is
	// (partial.go); each symbol of a partial answer says so.
	res, err := s.askPartially(ctx,
		func(eng Engine) (retriever.Result, error) { return eng.Symbols(ctx, params.Query, 0) },
		func(ps PartialSearcher) (retriever.Result, error) { return ps.SymbolsPartial(ctx, params.Query, 0) })
	if err != nil {
		return nil, err
	}
	notice, partial := indexingNotice(res)
	out := make([]protocol.SymbolInformation, 0, len(res.Items))
	for _, it := range res.Items {
		sym := toSymbol(it)
		if partial {
			sym.ContainerName = partialContainer(sym.ContainerName, notice)
		}
		out = append(out, sym)
	}
	s.logger.Debug("workspace/symbol", zap.Int("symbols", len(out)))
	return out, nil
}

func toSymbol(it retriever.Item) protocol.SymbolInformation {
	return protocol.SymbolInformation{
		Name: symbolName(it.Text),
		Kind: protocol.SymbolKindString,
		Location: protocol.Location{
			URI:   uri.URI(it.Location.URI),
			Range: toProtocolRange(it.Location.Range),
		},
		ContainerName: containerName(it),
	}
}

// symbolName shortens a piece for display: white space runs become one
// space, and a long text is cut with an ellipsis.
func symbolName(text string) string {
	name := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(name) > maxSymbolName {
		runes := []rune(name)
		name = strings.TrimSpace(string(runes[:maxSymbolName-1])) + "…"
	}
	if name == "" {
		name = "(blank)" // LSP requires a non-empty name
	}
	return name
}

// containerName names episode, agent, the file within the agent's folder and
// the conversation: "episode-2 · alice · chat.history · conv-7".
func containerName(it retriever.Item) string {
	parts := []string{it.Episode, it.Agent}
	file := it.File
	if prefix := path.Join(it.Episode, it.Agent) + "/"; strings.HasPrefix(file, prefix) {
		file = strings.TrimPrefix(file, prefix)
	}
	if file != "" {
		parts = append(parts, file)
	}
	if it.Conversation != nil {
		parts = append(parts, *it.Conversation)
	}
	return strings.Join(parts, " · ")
}
