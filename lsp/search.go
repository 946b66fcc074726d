package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"runls/retriever"
)

// SearchParams are the params of run/search: the request of spec §5. A field
// that is absent, null or "" takes the settings' value (turnMessage and query
// have none).
type SearchParams struct {
	TurnMessage  *string `json:"turnMessage,omitempty"`
	Query        *string `json:"query,omitempty"`
	Agent        *string `json:"agent,omitempty"`
	Episode      *string `json:"episode,omitempty"`
	Conversation *string `json:"conversation,omitempty"`
	Scope        *string `json:"scope,omitempty"`
	TopK         *int    `json:"topK,omitempty"`
	// From and To bound the records' time (spec §5, revision 3); they have
	// no setting.
	From *string `json:"from,omitempty"`
	To   *string `json:"to,omitempty"`
	// AllConversations (runls' own) widens the current episode to every
	// conversation; it has no setting.
	AllConversations *bool `json:"allConversations,omitempty"`
}

// SearchResult is the result of run/search; the engine's Result has its shape.
type SearchResult = retriever.Result

// RunSearch answers run/search from the engine, with the settings as defaults.
func (h handlers) RunSearch(ctx context.Context, params *SearchParams) (*SearchResult, error) {
	s := h.s
	s.mu.Lock()
	req := s.settings.request()
	s.mu.Unlock()
	req, err := params.merge(req)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, requestError(err)
	}

	res, err := s.search(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.Items == nil {
		res.Items = []retriever.Item{}
	}
	s.logger.Debug("run/search", zap.Int("items", len(res.Items)))
	return &res, nil
}

// search asks the engine: once the first index is built, or retriever.PartialGrace
// has passed, whichever comes first, when the engine can answer partially
// (partial.go).
func (s *server) search(ctx context.Context, req retriever.Request) (SearchResult, error) {
	return s.askPartially(ctx,
		func(eng Engine) (retriever.Result, error) { return eng.Search(ctx, req) },
		func(ps PartialSearcher) (retriever.Result, error) { return ps.SearchPartial(ctx, req) })
}

// merge lays the params over the settings' request fields.
func (p *SearchParams) merge(req retriever.Request) (retriever.Request, error) {
	set := func(dst *string, v *string) {
		if v != nil && *v != "" {
			*dst = *v
		}
	}
	set(&req.TurnMessage, p.TurnMessage)
	set(&req.Query, p.Query)
	set(&req.Agent, p.Agent)
	set(&req.Episode, p.Episode)
	set(&req.Conversation, p.Conversation)
	set(&req.Scope, p.Scope)
	set(&req.From, p.From)
	set(&req.To, p.To)
	if p.AllConversations != nil {
		req.AllConversations = *p.AllConversations
	}
	if p.TopK != nil {
		// retriever.Request reads a zero TopK as absent (the settings' "unset");
		// given in a request, 0 is out of range, as on the command line.
		if *p.TopK == 0 {
			return req, requestError(retriever.TopKError("0"))
		}
		req.TopK = *p.TopK
	}
	return req, nil
}

// requestError answers a *retriever.FieldError with -32602 naming the field
// (and giving it in the error's data); any other engine error is internal.
func requestError(err error) error {
	var fe *retriever.FieldError
	if errors.As(err, &fe) {
		e := jsonrpc2.NewError(jsonrpc2.InvalidParams, fe.Error())
		if data, merr := json.Marshal(map[string]string{"field": fe.Field, "value": fe.Value}); merr == nil {
			raw := json.RawMessage(data)
			e.Data = &raw
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return jsonrpc2.Errorf(jsonrpc2.InternalError, "runls: %v", err)
}

// jsonKind names a Go kind as JSON does.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	}
	return strconv.Quote(kind)
}

func asTypeError(err error, te **json.UnmarshalTypeError) bool { return errors.As(err, te) }
