package lsp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/retriever"
)

// Record structure in the editor (spec §11): textDocument/documentSymbol,
// textDocument/foldingRange and textDocument/hover, answered for every
// record file of the run from the engine's record table and the file on
// disk, whether or not the editor sent the text (VS Code does not sync a
// file over 50 MB to extensions). A plain file gets [] (hover: null).

// MaxOutlineRecords is how many records documentSymbol lists: a 100 MB log
// holds some 700,000, more than an outline can show or an editor can take in
// one answer (VS Code's own JSON outline stops at 5,000 items, as its
// folding does). Past it, one last top-level symbol says how many more there
// are and spans them.
const MaxOutlineRecords = 5000

// DocumentSymbol answers the conversation runs of a record file, each with
// its records: DocumentSymbol[] to a client that takes the hierarchy, else
// SymbolInformation[] in document order, each record's container its run.
func (h handlers) DocumentSymbol(ctx context.Context, params *protocol.DocumentSymbolParams) ([]interface{}, error) {
	out := []interface{}{}
	g, path, err := h.s.recordRequest(ctx, params.TextDocument.URI)
	defer g.release()
	if err != nil || path == "" {
		return out, err
	}
	o, err := g.engine.Outline(ctx, path, MaxOutlineRecords)
	if err != nil {
		return recordError(h.s, out, "textDocument/documentSymbol", path, err)
	}
	caps := h.s.clientCaps()
	tree := outlineSymbols(o, caps.recordKind)
	if caps.hierarchicalSymbols {
		for _, sym := range tree {
			out = append(out, sym)
		}
		return out, nil
	}
	for _, sym := range tree {
		out = append(out, flatSymbol(sym, params.TextDocument.URI, ""))
		for _, child := range sym.Children {
			out = append(out, flatSymbol(child, params.TextDocument.URI, sym.Name))
		}
	}
	return out, nil
}

// outlineSymbols is a file's outline as DocumentSymbols: a conversation run
// each, its records its children, of kind recordKind.
func outlineSymbols(o retriever.Outline, recordKind protocol.SymbolKind) []protocol.DocumentSymbol {
	out := make([]protocol.DocumentSymbol, 0, len(o.Runs)+1)
	for _, run := range o.Runs {
		sym := protocol.DocumentSymbol{
			Name:           noConversationField,
			Kind:           protocol.SymbolKindNamespace,
			Range:          toProtocolRange(run.Range),
			SelectionRange: toProtocolRange(run.Selection),
			Children:       make([]protocol.DocumentSymbol, 0, len(run.Records)),
		}
		if run.Conversation != nil {
			sym.Name = nonBlank(*run.Conversation)
		}
		for _, r := range run.Records {
			sym.Children = append(sym.Children, protocol.DocumentSymbol{
				Name:           r.Name,
				Detail:         r.Detail,
				Kind:           recordKind,
				Range:          toProtocolRange(r.Range),
				SelectionRange: toProtocolRange(r.Selection),
			})
		}
		out = append(out, sym)
	}
	if o.More > 0 {
		rest := toProtocolRange(o.Rest)
		out = append(out, protocol.DocumentSymbol{
			Name:           fmt.Sprintf("… %d more records (the outline lists the first %d)", o.More, MaxOutlineRecords),
			Kind:           protocol.SymbolKindNamespace,
			Range:          rest,
			SelectionRange: protocol.Range{Start: rest.Start, End: rest.Start},
		})
	}
	return out
}

// flatSymbol is a DocumentSymbol as SymbolInformation (no detail there: a
// record's detail, its level and state, joins its name).
func flatSymbol(sym protocol.DocumentSymbol, u protocol.DocumentURI, container string) protocol.SymbolInformation {
	name := sym.Name
	if sym.Detail != "" {
		name += " (" + sym.Detail + ")"
	}
	return protocol.SymbolInformation{
		Name:          name,
		Kind:          sym.Kind,
		Location:      protocol.Location{URI: u, Range: sym.Range},
		ContainerName: container,
	}
}

// noConversationField names the run of unfielded records (spec §11).
const noConversationField = "(no conversation field)"

// FoldingRanges answers one range per record of several lines and one per
// conversation run of several records.
func (h handlers) FoldingRanges(ctx context.Context, params *protocol.FoldingRangeParams) ([]protocol.FoldingRange, error) {
	g, path, err := h.s.recordRequest(ctx, params.TextDocument.URI)
	defer g.release()
	if err != nil || path == "" {
		return []protocol.FoldingRange{}, err
	}
	folds := g.engine.Folds(path)
	out := make([]protocol.FoldingRange, len(folds))
	for i, f := range folds {
		out[i] = protocol.FoldingRange{StartLine: uint32(f.StartLine), EndLine: uint32(f.EndLine)}
	}
	return out, nil
}

// Hover answers the facts of the record under the position, and whether it
// is evidence for a search made with the current settings.
func (h handlers) Hover(ctx context.Context, params *protocol.HoverParams) (*protocol.Hover, error) {
	g, path, err := h.s.recordRequest(ctx, params.TextDocument.URI)
	defer g.release()
	if err != nil || path == "" {
		return nil, err
	}
	h.s.mu.Lock()
	req := h.s.settings.request()
	h.s.mu.Unlock()
	facts, err := g.engine.RecordAt(ctx, path, int(params.Position.Line), req)
	if err != nil {
		return recordError[*protocol.Hover](h.s, nil, "textDocument/hover", path, err)
	}
	if facts == nil {
		return nil, nil
	}
	r := toProtocolRange(facts.Range)
	// As gopls does: Markdown to a client that says it takes it, else plain text.
	kind := protocol.PlainText
	if h.s.clientCaps().markdownHover {
		kind = protocol.Markdown
	}
	return &protocol.Hover{
		Contents: protocol.MarkupContent{Kind: kind, Value: hoverText(facts, req, kind == protocol.Markdown)},
		Range:    &r,
	}, nil
}

// recordRequest waits for the first indexing and returns the generation
// (release it) and the path of a document of the run, or "" when there is
// none to answer for.
func (s *server) recordRequest(ctx context.Context, u protocol.DocumentURI) (*generation, string, error) {
	g := s.acquire()
	if g == nil || g.engine == nil {
		return g, "", nil
	}
	path, ok := s.pathOf(u)
	if !ok {
		return g, "", nil
	}
	if err := g.waitReady(ctx); err != nil {
		return g, "", err
	}
	return g, path, nil
}

// recordError answers a file the engine could not read back as an empty
// answer (it changed since it was read: the index reads it again at once,
// and editors ask again when a file changes), and any other error as one.
func recordError[T any](s *server, empty T, method, path string, err error) (T, error) {
	s.logger.Debug(method, zap.String("file", path), zap.Error(err))
	if err == retriever.ErrChanged {
		return empty, nil
	}
	return empty, requestError(err)
}

// hoverText is the record's facts, one fact a line, as Markdown (values
// from the file as code spans) or as plain text.
func hoverText(f *retriever.RecordFacts, req retriever.Request, markdown bool) string {
	code, escape, strong, em := code, escapeMarkdown, func(s string) string { return "**" + s + "**" }, func(s string) string { return "_" + s + "_" }
	if !markdown {
		plain := func(s string) string { return s }
		code, escape, strong, em = plain, plain, plain, plain
	}
	var lines []string
	lines = append(lines, strong(escape(f.Agent))+" · "+f.Episode)
	switch {
	case f.BeforeFirst:
		lines = append(lines, "a line before the file's first record: no time, no level, no conversation field")
	default:
		when := []string{f.Time}
		if f.Level != "" {
			when = append(when, f.Level)
		}
		when = append(when, "state "+code(f.State))
		lines = append(lines, strings.Join(when, " · "))
		if f.Conversation != nil {
			lines = append(lines, "conversation "+code(*f.Conversation))
		} else {
			lines = append(lines, "no conversation field (written before logback pattern 0.18.6)")
		}
	}
	reading := "reading: " + string(f.Reading)
	if f.LeftOut != "" {
		reading += " · left out: " + escape(f.LeftOut)
	}
	lines = append(lines, reading)
	if f.Since != nil {
		previous := "the previous unfielded record"
		if f.Conversation != nil {
			previous = "the previous record of " + code(*f.Conversation)
		}
		lines = append(lines, formatSince(*f.Since)+" since "+previous+" in this file")
	}
	if f.Evidence {
		lines = append(lines, "evidence: yes")
	} else {
		lines = append(lines, "evidence: no ("+f.Reason+")", em(whyNot(f, req)))
	}
	if !markdown {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines, "  \n")
}

// whyNot says in plain words what a reason means for a search made with the
// current settings.
func whyNot(f *retriever.RecordFacts, req retriever.Request) string {
	switch f.Reason {
	case retriever.ReasonLeftOut:
		if f.Reading == retriever.ReadingLeftOut && f.Level != "DEBUG" && f.Level != "TRACE" {
			return "the interpreter reads it as leftOut, so it is not indexed: no search returns it"
		}
		return "records at DEBUG and TRACE are not indexed: no search returns it"
	case retriever.ReasonMasked:
		return "masking hid every word of it: no search returns it"
	case retriever.ReasonNoTerms:
		return "it holds no word to search for"
	case retriever.ReasonOtherAgent:
		return "the agent setting (" + req.Agent + ") names another agent: a search with the current settings does not return it"
	case retriever.ReasonScope:
		return "the scope setting is episode and this is not the current episode: a search with the current settings does not return it"
	case retriever.ReasonNoContext:
		return "record files are searched only when the settings name an episode and a conversation"
	case retriever.ReasonUnfielded:
		return "its episode is the current one (" + req.Episode + ") and it has no conversation field, so a search cannot tell its conversation"
	case retriever.ReasonOtherConversation:
		return "it was written in another conversation of the current episode than " + req.Conversation
	}
	return f.Reason
}

// formatSince writes a time between records: "+2.5 s", "+4 min 5 s",
// "+2 h 3 min", "+3 d 4 h"; "−1.2 s" when the clock went back.
func formatSince(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "−", -d
	}
	switch {
	case d < time.Minute:
		s := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return sign + s + " s"
	case d < time.Hour:
		return fmt.Sprintf("%s%d min %d s", sign, int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%s%d h %d min", sign, int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%s%d d %d h", sign, int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// code writes a value taken from a file as a Markdown code span, whatever
// backticks it holds.
func code(s string) string {
	if s == "" {
		return "(empty)"
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// escapeMarkdown makes text show as written.
func escapeMarkdown(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()#+-.!<>|~", r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// nonBlank is s, or a stand-in for a name LSP does not take.
func nonBlank(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(blank)"
	}
	return s
}
