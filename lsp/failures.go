package lsp

import (
	"context"

	"go.uber.org/zap"

	"runls/retriever"
)

// run/failures (spec §9): the run's ERROR records and exceptions grouped by
// their message with what varies taken out, from the engine.

// FailuresParams are the params of run/failures. A field that is absent,
// null or "" is not given; the settings give no defaults (the view is of
// the run, not of the chat's context): no episode is the whole run.
//
// MaxRecords (0–100) and Pattern are runls' own, for an editor that lists
// the groups collapsed and fetches a group's records when it is expanded
// (docs/choices.md); absent, the answer is §9's.
type FailuresParams struct {
	Episode    *string `json:"episode,omitempty"`
	Agent      *string `json:"agent,omitempty"`
	MinLevel   *string `json:"minLevel,omitempty"`
	MaxRecords *int    `json:"maxRecords,omitempty"`
	Pattern    *string `json:"pattern,omitempty"`
}

// FailuresResult is the result of run/failures; the engine's has its shape.
type FailuresResult = retriever.FailuresResult

// RunFailures answers run/failures from the engine, after the first
// indexing.
func (h handlers) RunFailures(ctx context.Context, params *FailuresParams) (*FailuresResult, error) {
	req := retriever.FailuresRequest{MaxRecords: params.MaxRecords}
	for dst, v := range map[*string]*string{&req.Episode: params.Episode, &req.Agent: params.Agent, &req.MinLevel: params.MinLevel, &req.Pattern: params.Pattern} {
		if v != nil {
			*dst = *v
		}
	}
	if err := req.Validate(); err != nil {
		return nil, requestError(err)
	}
	res, err := askEngine(ctx, h.s, func(e Engine) (FailuresResult, error) { return e.Failures(ctx, req) })
	if err != nil {
		return nil, err
	}
	if res.Groups == nil {
		res.Groups = []retriever.FailureGroup{}
	}
	h.s.logger.Debug("run/failures", zap.Int("groups", len(res.Groups)))
	return &res, nil
}
