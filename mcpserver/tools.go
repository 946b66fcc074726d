package mcpserver

// This file holds the list of tools and what they share: their annotations,
// their schemas, the wait for the first indexing, and how an answer and an
// error are made.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runls/retriever"
)

// addTools adds every tool of spec §14.
func (s *Server) addTools() error {
	return errors.Join(
		addTool(s, searchTool, s.search),
		addTool(s, recordsTool, s.records),
		addTool(s, readTool, s.read),
		addTool(s, runInfoTool, s.runInfo),
	)
}

// toolSpec is what a tool says of itself.
type toolSpec struct {
	name, title, description string
	// input adjusts the input schema inferred from the input type (bounds,
	// defaults, enums); nil: none.
	input func(*jsonschema.Schema)
	// output adjusts the output schema likewise; nil: none.
	output func(*jsonschema.Schema)
	// whileIndexing: the tool answers once retriever.PartialGrace has
	// passed while the first indexing runs, saying how far it is (search
	// with the engine's partial answer, run_info with its indexing), where
	// the others wait for the whole index.
	whileIndexing bool
}

// toolFunc answers a tool's call: the structured result and its compact
// text rendering.
type toolFunc[In, Out any] func(ctx context.Context, in In) (Out, string, error)

// addTool adds a tool whose input and output schemas are inferred from In
// and Out, made acceptable to every client (see tidySchema), and checked.
func addTool[In, Out any](s *Server, spec toolSpec, answer toolFunc[In, Out]) error {
	in, err := schemaFor[In]()
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", spec.name, err)
	}
	if spec.input != nil {
		spec.input(in)
	}
	s.inputs[spec.name] = in
	out, err := schemaFor[Out]()
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", spec.name, err)
	}
	if spec.output != nil {
		spec.output(out)
	}
	notDestructive, closedWorld := false, false
	tool := &mcp.Tool{
		Name:        spec.name,
		Title:       spec.title,
		Description: spec.description,
		InputSchema: in, OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:           spec.title,
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: &notDestructive,
			OpenWorldHint:   &closedWorld,
		},
	}
	mcp.AddTool(s.mcp, tool, func(ctx context.Context, req *mcp.CallToolRequest, args In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		wait := s.waitIndexed
		if spec.whileIndexing {
			wait = s.waitIndexedOrGrace
		}
		if err := wait(ctx, req); err != nil {
			return nil, zero, err
		}
		res, text, err := answer(ctx, args)
		if err != nil {
			return nil, zero, toolError(err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, res, nil
	})
	return nil
}

// toolError is the text of a failed call: a bad field is named as the
// engine names it; a cancelled call says so.
func toolError(err error) error {
	var fe *retriever.FieldError
	switch {
	case errors.As(err, &fe):
		return fmt.Errorf("invalid argument %s %q: %s", fe.Field, clip(fe.Value, 200), fe.Reason)
	case errors.Is(err, context.Canceled):
		return errors.New("cancelled")
	}
	return fmt.Errorf("runls: %w", err)
}

// clip shortens a value quoted in an error (a 10 MB argument is not echoed).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return retriever.CutText(s, n) + "…"
}

// plainArgumentErrors rewrites the SDK's schema validation errors (such as
// `validating "arguments": validating root: validating /properties/topK:
// maximum: 51/1 is greater than 50.000000`) as the engine's own are written:
// the argument named, its value, and what is wanted.
func (s *Server) plainArgumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		call, isCall := req.(*mcp.CallToolRequest)
		if err != nil || !ok || r == nil || !r.IsError || len(r.Content) != 1 || !isCall || call.Params == nil {
			return res, err
		}
		t, ok := r.Content[0].(*mcp.TextContent)
		schema := s.inputs[call.Params.Name]
		if !ok || schema == nil || !strings.HasPrefix(t.Text, `validating "arguments": `) {
			return res, err
		}
		t.Text = argumentError(schema, call.Params.Arguments, t.Text)
		return res, err
	}
}

// emptyIsAbsent drops every argument given as "" from a tool call before
// the arguments are checked (spec §5, §14: "" is the same as an absent
// field): models often fill the optional arguments they do not mean with "".
// Arguments that are not a JSON object are left for the check to refuse.
func emptyIsAbsent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && len(call.Params.Arguments) > 0 {
			var args map[string]json.RawMessage
			if json.Unmarshal(call.Params.Arguments, &args) == nil && args != nil {
				n := len(args)
				maps.DeleteFunc(args, func(_ string, v json.RawMessage) bool { return string(v) == `""` })
				if len(args) < n {
					if raw, err := json.Marshal(args); err == nil {
						call.Params.Arguments = raw
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// argumentError says which argument a validation message is about, and what
// the schema wants of it.
func argumentError(schema *jsonschema.Schema, raw json.RawMessage, msg string) string {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil && len(raw) > 0 && string(raw) != "null" {
		return "invalid arguments: want a JSON object of named arguments"
	}
	names := slices.Sorted(maps.Keys(schema.Properties))
	if _, rest, ok := strings.Cut(msg, "unexpected additional properties "); ok {
		return fmt.Sprintf("unknown argument %s: this tool takes %s", clip(strings.Trim(rest, "[]"), 200), strings.Join(names, ", "))
	}
	if _, rest, ok := strings.Cut(msg, "missing properties: "); ok {
		return fmt.Sprintf("missing argument %s", strings.Trim(rest, `[]"`))
	}
	_, rest, ok := strings.Cut(msg, "validating /properties/")
	if !ok {
		return msg
	}
	name, _, _ := strings.Cut(rest, ":")
	p := schema.Properties[name]
	if p == nil {
		return msg
	}
	want := "want " + article(p.Type)
	if p.Minimum != nil && p.Maximum != nil {
		want += " from " + strconv.FormatFloat(*p.Minimum, 'f', -1, 64) + " to " + strconv.FormatFloat(*p.Maximum, 'f', -1, 64)
	}
	if len(p.Enum) > 0 {
		want += fmt.Sprintf(", one of %v", p.Enum)
	}
	return fmt.Sprintf("invalid argument %s %s: %s", name, clip(string(args[name]), 200), want)
}

func article(jsonType string) string {
	switch jsonType {
	case "integer", "object", "array":
		return "an " + jsonType
	case "":
		return "a value"
	}
	return "a " + jsonType
}
