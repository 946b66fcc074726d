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

// decodeFast decodes params in the shape editors and agents send them
// (an object of SearchParams' own names, each once, with strings of UTF-8
// without escapes, an integer topK, a boolean allConversations, "" and
// null as absent) without encoding/json's reflection: that was 6 µs of a
// cold run/search, some 2% of a cheap one (issue 33). It reports false for
// any other params, which then go through encoding/json (typed); what it
// decodes is what that gives (TestSearchParamsPlain, FuzzSearchParamsPlain).
// raw is valid JSON (the stream reads no other message).
func (p *SearchParams) decodeFast(raw []byte) bool {
	var out SearchParams
	var seen uint16
	ok := objectMembers(raw, func(key, value []byte) bool {
		bit, ok := out.setPlain(string(key), value)
		if !ok || seen&bit != 0 {
			return false // another value, a name of another case or field, or one given twice
		}
		seen |= bit
		return true
	})
	if ok {
		*p = out
	}
	return ok
}

// setPlain sets the field named key from its value v, and returns the
// field's bit among those given; false for no field of that exact name or
// a value of another shape.
func (p *SearchParams) setPlain(key string, v []byte) (bit uint16, ok bool) {
	switch key {
	case "turnMessage":
		return 1 << 0, plainStringValue(v, &p.TurnMessage)
	case "query":
		return 1 << 1, plainStringValue(v, &p.Query)
	case "agent":
		return 1 << 2, plainStringValue(v, &p.Agent)
	case "episode":
		return 1 << 3, plainStringValue(v, &p.Episode)
	case "conversation":
		return 1 << 4, plainStringValue(v, &p.Conversation)
	case "scope":
		return 1 << 5, plainStringValue(v, &p.Scope)
	case "from":
		return 1 << 6, plainStringValue(v, &p.From)
	case "to":
		return 1 << 7, plainStringValue(v, &p.To)
	case "topK":
		return 1 << 8, plainIntValue(v, &p.TopK)
	case "allConversations":
		return 1 << 9, plainBoolValue(v, &p.AllConversations)
	}
	return 0, false
}

// plainStringValue sets *dst from a JSON string of UTF-8 without escapes;
// "" and null leave it nil (spec §5: absent). False for any other value.
func plainStringValue(v []byte, dst **string) bool {
	switch {
	case string(v) == "null" || string(v) == `""`:
		return true
	case plainString(v):
		s := string(v[1 : len(v)-1])
		*dst = &s
		return true
	}
	return false
}

// plainIntValue sets *dst from a JSON integer of up to 18 characters (a
// sign counts); "" and null leave it nil. False for any other value.
func plainIntValue(v []byte, dst **int) bool {
	if string(v) == "null" || string(v) == `""` {
		return true
	}
	if !isInteger(v) || len(v) > 18 {
		return false
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return false
	}
	*dst = &n
	return true
}

// plainBoolValue sets *dst from true or false; "" and null leave it nil.
func plainBoolValue(v []byte, dst **bool) bool {
	var b bool
	switch string(v) {
	case "null", `""`:
		return true
	case "true":
		b = true
	case "false":
	default:
		return false
	}
	*dst = &b
	return true
}
