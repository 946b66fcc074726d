package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
)

// The custom requests of spec §9, all in one place: their methods, typed
// params and results, and the handlers that decode them.
const (
	// MethodRunSearch ranks the run's evidence for a request (spec §5).
	MethodRunSearch = "run/search"
	// MethodRunInfo tells what the run holds.
	MethodRunInfo = "run/info"
	// MethodRunRecords lists an episode's records in time order (spec §13).
	MethodRunRecords = "run/records"
	// MethodRunFailures groups the run's failures (spec §9).
	MethodRunFailures = "run/failures"
)

// customHandlers routes the custom methods to typed handlers.
func (s *server) customHandlers() map[string]jsonrpc2.Handler {
	h := handlers{s}
	return map[string]jsonrpc2.Handler{
		MethodRunSearch:   typed(h.RunSearch),
		MethodRunInfo:     typed(h.RunInfo),
		MethodRunRecords:  typed(h.RunRecords),
		MethodRunFailures: typed(h.RunFailures),
	}
}

// typed decodes a request's params into P (through P's own decodeFast
// when it has one and the params are of its shape, else with
// encoding/json, so that a field of the wrong type is named), calls f and
// replies with its result. Params that do not decode answer -32602.
func typed[P, R any](f func(context.Context, *P) (R, error)) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		var params P
		if raw := req.Params(); !decodedFast(&params, raw) && len(raw) > 0 && !isNull(raw) {
			raw = dropEmptyStrings(raw)
			if err := json.Unmarshal(raw, &params); err != nil {
				return reply(ctx, nil, paramsError(req.Method(), raw, err))
			}
		}
		result, err := f(ctx, &params)
		if err != nil {
			return reply(ctx, nil, err)
		}
		return reply(ctx, result, nil)
	}
}

// fastParams are params that decode their plain shape themselves, faster
// than encoding/json: false for any other, which goes through it.
type fastParams interface {
	decodeFast(raw []byte) bool
}

// decodedFast reports whether params decoded raw through its own
// decodeFast (as encoding/json would have).
func decodedFast(params any, raw []byte) bool {
	f, ok := params.(fastParams)
	return ok && f.decodeFast(raw)
}

// dropEmptyStrings leaves out the fields of a params object given as "":
// spec §5 reads "" as absent, for a field of any type ("topK": "" too, as
// editors' settings write "unset"). Params that are no object are kept.
func dropEmptyStrings(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`""`)) {
		return raw
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw
	}
	n := len(fields)
	maps.DeleteFunc(fields, func(_ string, v json.RawMessage) bool { return string(v) == `""` })
	if len(fields) == n {
		return raw
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return out
}

// paramsError is the -32602 answer to params that do not decode, naming
// the field and its value (`"limit": "abc"`) when encoding/json says which
// field, with {"field", "value"} as data, as requestError gives them.
func paramsError(method string, raw json.RawMessage, err error) *jsonrpc2.Error {
	var te *json.UnmarshalTypeError
	if !asTypeError(err, &te) {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid %s params: %v", method, err)
	}
	if te.Field == "" {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid %s params: params must be an object, not %s", method, te.Value)
	}
	value := valueAt(raw, te.Field)
	e := jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid %s params: %q: %s must be %s, not %s",
		method, te.Field, clipValue(value), jsonKind(te.Type.Kind().String()), te.Value)
	shown := value
	var str string
	if json.Unmarshal(value, &str) == nil {
		shown = json.RawMessage(str)
	}
	if data, merr := json.Marshal(map[string]string{"field": te.Field, "value": string(shown)}); merr == nil {
		d := json.RawMessage(data)
		e.Data = &d
	}
	return e
}

// valueAt is the JSON text of the value at a dotted field path of raw (as
// encoding/json names a field: "at.range.start.line"), or null.
func valueAt(raw json.RawMessage, path string) json.RawMessage {
	for _, name := range strings.Split(path, ".") {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields[name] == nil {
			return json.RawMessage("null")
		}
		raw = fields[name]
	}
	return raw
}

// clipValue shortens a value quoted in an error: a 10 MB param is not echoed.
func clipValue(v json.RawMessage) string {
	const max = 200
	if len(v) <= max {
		return string(v)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return string(v[:cut]) + "…"
}
