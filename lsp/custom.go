package lsp

import (
	"context"
	"encoding/json"

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

// typed decodes a request's params into P (with encoding/json, so that a
// field of the wrong type is named), calls f and replies with its result.
// Params that do not decode answer -32602.
func typed[P, R any](f func(context.Context, *P) (R, error)) jsonrpc2.Handler {
	return func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		var params P
		if raw := req.Params(); len(raw) > 0 && !isNull(raw) {
			if err := json.Unmarshal(raw, &params); err != nil {
				return reply(ctx, nil, paramsError(req.Method(), err))
			}
		}
		result, err := f(ctx, &params)
		if err != nil {
			return reply(ctx, nil, err)
		}
		return reply(ctx, result, nil)
	}
}

// paramsError is the -32602 answer to params that do not decode, naming the
// field when encoding/json says which.
func paramsError(method string, err error) *jsonrpc2.Error {
	var te *json.UnmarshalTypeError
	if ok := asTypeError(err, &te); ok {
		if te.Field != "" {
			return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid %s params: %s must be %s, not %s", method, te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid %s params: params must be an object, not %s", method, te.Value)
	}
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid %s params: %v", method, err)
}
