package mcpserver

// This file masks every text of an answer once more before it leaves the
// process (spec §14: with --mask every text is masked). Evidence is masked
// by the engine already; this pass covers what else an answer carries (an
// error that quotes an argument, a name) and costs a masker run per string.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/masking"
)

// maskAnswers is a middleware that masks the answers of tool calls and the
// messages of every error.
func (s *Server) maskAnswers(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			var we *jsonrpc.Error
			if errors.As(err, &we) {
				masked := *we
				masked.Message = s.mask(we.Message)
				return res, &masked
			}
			return res, errors.New(s.mask(err.Error()))
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = s.mask(t.Text)
				}
			}
			if r.StructuredContent != nil {
				r.StructuredContent, err = s.maskJSON(r.StructuredContent)
				if err != nil {
					return nil, err
				}
			}
		}
		return res, nil
	}
}

func (s *Server) mask(text string) string {
	spans, _ := s.opts.Masker.Mask(text)
	out, _ := masking.Apply(text, spans)
	return out
}

// maskJSON masks every string (keys too) of a JSON value.
func (s *Server) maskJSON(v any) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, err
	}
	return json.Marshal(s.maskTree(tree))
}

func (s *Server) maskTree(v any) any {
	switch v := v.(type) {
	case string:
		return s.mask(v)
	case []any:
		for i := range v {
			v[i] = s.maskTree(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.mask(k)] = s.maskTree(e)
		}
		return out
	}
	return v
}
