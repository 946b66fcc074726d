package mcpserver

// This file holds the search tool: the request of spec §5 answered with the
// run/search result, bounded for a model's context.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"runls/retriever"
)

// Bounds of the answers (spec §14), so that none comes near the ~25,000
// tokens clients accept: the texts of one answer hold at most
// MaxAnswerTextBytes in all, and each answer carries them twice (the
// structured result and its text rendering).
const (
	DefaultTopK        = 10
	MaxTopK            = 50
	MaxReadLines       = 200
	DefaultReadLines   = 100
	MaxLineBytes       = 2000
	MaxAnswerTextBytes = 24 << 10
)

var searchTool = toolSpec{
	name:  "search",
	title: "Search the run's evidence",
	description: "Search what the agents of this run wrote (their records and notes) for evidence, ranked by BM25. " +
		"Call it to recall what an agent was told, said, decided or noted. " +
		"Give the chat turn's message as turnMessage (or keywords as query), and the episode and conversation you are in: " +
		"records (.history and .log files) are searched only when both episode and conversation are given, " +
		"and then records of the current episode only in that conversation; notes are always searched. " +
		"Each hit is one line: episode-N/<agent>/<file>:<line>: <text>; read that path and line for the lines around it.",
	input: func(s *jsonschema.Schema) {
		bound(s, "topK", 1, MaxTopK, DefaultTopK)
		s.Properties["scope"].Enum = []any{"run", "episode"}
	},
}

type searchInput struct {
	TurnMessage  string `json:"turnMessage,omitempty" jsonschema:"the chat turn's message: ranks the evidence (preferred over query when both are given); records of being told it are not returned"`
	Query        string `json:"query,omitempty" jsonschema:"keywords that rank the evidence when there is no turnMessage"`
	Agent        string `json:"agent,omitempty" jsonschema:"search only this agent's files (an agent folder's name, as run_info lists them)"`
	Episode      string `json:"episode,omitempty" jsonschema:"the current episode, as episode-N"`
	Conversation string `json:"conversation,omitempty" jsonschema:"the current conversation id, as run_info lists them"`
	Scope        string `json:"scope,omitempty" jsonschema:"run (the default): every episode; episode: the current episode only"`
	TopK         int    `json:"topK,omitempty" jsonschema:"at most this many hits, 1 to 50"`
}

// searchOutput is the run/search result, its locations made relative.
type searchOutput struct {
	Items []searchItem `json:"items"`
	// Cut reports that texts were cut to bound the answer.
	Cut bool `json:"cut,omitempty" jsonschema:"some texts were cut to bound the answer (each such item says so)"`
}

type searchItem struct {
	Location     location `json:"location"`
	Score        float64  `json:"score"`
	Text         string   `json:"text" jsonschema:"the piece of evidence: one line of a record or note, at most 2000 characters"`
	Cut          bool     `json:"cut,omitempty" jsonschema:"the text is cut: read the line for all of it"`
	Agent        string   `json:"agent"`
	Episode      string   `json:"episode"`
	Conversation string   `json:"conversation,omitempty" jsonschema:"the conversation the record was written in (- for none); absent for notes and records without the field"`
	Reading      string   `json:"reading" jsonschema:"note, told (a message the agent was told) or said (a message the agent said)"`
}

// location is a line of a file of the run.
type location struct {
	Path string `json:"path" jsonschema:"the file's path relative to the run folder"`
	Line int    `json:"line" jsonschema:"1-based line number"`
}

func (s *Server) search(ctx context.Context, in searchInput) (searchOutput, string, error) {
	req := retriever.Request{
		TurnMessage: in.TurnMessage, Query: in.Query, Agent: in.Agent, Episode: in.Episode,
		Conversation: in.Conversation, Scope: in.Scope, TopK: in.TopK,
	}
	if req.TopK == 0 {
		req.TopK = DefaultTopK
	}
	if req.TopK < 1 || req.TopK > MaxTopK {
		return searchOutput{}, "", &retriever.FieldError{Field: "topK", Value: strconv.Itoa(req.TopK), Reason: "want 1 to " + strconv.Itoa(MaxTopK)}
	}
	if strings.TrimSpace(req.TurnMessage) == "" && strings.TrimSpace(req.Query) == "" {
		return searchOutput{}, "", &retriever.FieldError{Field: "query", Reason: "want a query or a turnMessage"}
	}
	res, err := s.eng.Search(ctx, req)
	if err != nil {
		return searchOutput{}, "", err
	}
	out := searchOutput{Items: make([]searchItem, 0, len(res.Items))}
	lengths := make([]int, len(res.Items))
	for i, it := range res.Items {
		lengths[i] = len(it.Text)
	}
	share := fairShare(lengths, MaxAnswerTextBytes)
	for _, it := range res.Items {
		item := searchItem{
			Location: location{Path: it.File, Line: it.Location.Range.Start.Line + 1},
			Score:    it.Score, Text: it.Text, Agent: it.Agent, Episode: it.Episode, Reading: string(it.Reading),
		}
		if it.Conversation != nil {
			item.Conversation = *it.Conversation
		}
		if len(item.Text) > share {
			item.Text, item.Cut, out.Cut = retriever.CutText(item.Text, share), true, true
		}
		out.Items = append(out.Items, item)
	}
	return out, renderSearch(req, out), nil
}

// fairShare is the largest length c such that the lengths, each cut to c,
// add up to at most budget: short texts stay whole, long ones are cut alike.
func fairShare(lengths []int, budget int) int {
	sorted := slices.Sorted(slices.Values(lengths))
	for i, n := range sorted {
		rest := len(sorted) - i
		if n*rest > budget {
			return budget / rest
		}
		budget -= n
	}
	return int(^uint(0) >> 1)
}

// renderSearch is the compact text of a search: one line per hit.
func renderSearch(req retriever.Request, out searchOutput) string {
	var b strings.Builder
	for _, it := range out.Items {
		fmt.Fprintf(&b, "%s:%d: %s", it.Location.Path, it.Location.Line, oneLine(it.Text))
		if it.Cut {
			b.WriteString(" […]")
		}
		b.WriteByte('\n')
	}
	if len(out.Items) == 0 {
		b.WriteString("no evidence found.\n")
	}
	if req.Episode == "" || req.Conversation == "" {
		b.WriteString("(records of .history and .log files were not searched: give both episode and conversation to search them.)\n")
	}
	if out.Cut {
		b.WriteString("(texts marked […] were cut to bound the answer: read their lines for the rest.)\n")
	}
	return b.String()
}

// oneLine keeps a text on its line of the rendering.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}
