package lsp

// This file holds what the client said it takes (initialize's
// capabilities), and how an answer falls back, as LSP says it should, for a
// client that did not announce the form runls prefers: flat symbols, the
// symbol kinds of the first protocol version, plain-text hovers.

import (
	"slices"

	"go.lsp.dev/protocol"
)

// clientCaps is what the answers depend on of the client's capabilities.
type clientCaps struct {
	// hierarchicalSymbols: documentSymbol may answer DocumentSymbol[];
	// otherwise it answers SymbolInformation[].
	hierarchicalSymbols bool
	// recordKind is the symbol kind of a record in documentSymbol: Event
	// (24) when the client's valueSet holds it, else recordKindFallback.
	recordKind protocol.SymbolKind
	// markdownHover: hovers are Markdown; otherwise plain text.
	markdownHover bool
	// workDoneProgress: the client takes window/workDoneProgress/create.
	workDoneProgress bool
}

// recordKindFallback is a record's kind for a client that knows only the
// kinds File (1) to Array (18): String (15), the kind workspace/symbol gives
// a piece, so that a record looks alike in both lists.
const recordKindFallback = protocol.SymbolKindString

// capsOf reads the capabilities of initialize's params.
func capsOf(c protocol.ClientCapabilities) clientCaps {
	caps := clientCaps{recordKind: recordKindFallback}
	if td := c.TextDocument; td != nil {
		if ds := td.DocumentSymbol; ds != nil {
			caps.hierarchicalSymbols = ds.HierarchicalDocumentSymbolSupport
			// LSP: without a valueSet, only File to Array are known.
			if ds.SymbolKind != nil && slices.Contains(ds.SymbolKind.ValueSet, protocol.SymbolKindEvent) {
				caps.recordKind = protocol.SymbolKindEvent
			}
		}
		if h := td.Hover; h != nil {
			caps.markdownHover = slices.Contains(h.ContentFormat, protocol.Markdown)
		}
	}
	caps.workDoneProgress = c.Window != nil && c.Window.WorkDoneProgress
	return caps
}

// clientCaps returns what the client announced at initialize.
func (s *server) clientCaps() clientCaps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}
