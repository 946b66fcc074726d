package lsp

import (
	"context"

	"go.uber.org/zap"

	"runls/retriever"
)

// run/records (spec §13): the records of an episode in time order, whole,
// across agents, filtered and paged, from the engine's record tables.

// RecordsParams are the params of run/records. A field that is absent,
// null or "" is not given; the settings give no defaults here (a view of
// the run asks for what it shows).
type RecordsParams struct {
	Episode      *string `json:"episode,omitempty"`
	Conversation *string `json:"conversation,omitempty"`
	Agent        *string `json:"agent,omitempty"`
	MinLevel     *string `json:"minLevel,omitempty"`
	From         *string `json:"from,omitempty"`
	To           *string `json:"to,omitempty"`
	Limit        *int    `json:"limit,omitempty"`
	Cursor       *string `json:"cursor,omitempty"`
	// At opens the list at a record (spec §13, revision 3): the page that
	// holds the record at this location, its index in the answer's atIndex.
	At *retriever.Location `json:"at,omitempty"`
}

// RecordsResult is the result of run/records; the engine's has its shape.
type RecordsResult = retriever.RecordsResult

// RunRecords answers run/records from the engine, after the first indexing.
func (h handlers) RunRecords(ctx context.Context, params *RecordsParams) (*RecordsResult, error) {
	req, err := params.request()
	if err != nil {
		return nil, requestError(err)
	}
	if err := req.Validate(); err != nil {
		return nil, requestError(err)
	}
	res, err := askEngine(ctx, h.s, func(e Engine) (RecordsResult, error) { return e.Records(ctx, req) })
	if err != nil {
		return nil, err
	}
	if res.Records == nil {
		res.Records = []retriever.Record{}
	}
	h.s.logger.Debug("run/records", zap.Int("records", len(res.Records)), zap.Bool("more", res.Cursor != nil), zap.Bool("earlier", res.PreviousCursor != nil))
	return &res, nil
}

// request is the engine's request of the params.
func (p *RecordsParams) request() (retriever.RecordsRequest, error) {
	var req retriever.RecordsRequest
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&req.Episode, p.Episode)
	set(&req.Conversation, p.Conversation)
	set(&req.Agent, p.Agent)
	set(&req.MinLevel, p.MinLevel)
	set(&req.From, p.From)
	set(&req.To, p.To)
	set(&req.Cursor, p.Cursor)
	req.At = p.At
	if p.Limit != nil {
		// The engine reads a zero Limit as absent; given, 0 is out of range.
		if *p.Limit == 0 {
			return req, retriever.RecordsLimitError("0")
		}
		req.Limit = *p.Limit
	}
	return req, nil
}
