package mcpserver

// This file holds the records tool: spec §13's run/records for an agent,
// the records of an episode in time order, whole, paged, bounded for a
// model's context.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"runls/retriever"
)

// Bounds of a records answer (spec §14).
const (
	DefaultRecordsLimit = 100
	MaxRecordsLimit     = 500
)

var recordsTool = toolSpec{
	name:  "records",
	title: "List an episode's records in time order",
	description: "List the records (.history and .log lines, each whole with its continuation lines and stack traces) " +
		"of one episode in time order, across agents: what happened in a conversation, step by step. " +
		"Call it to follow a conversation (give episode and conversation; - lists what was written outside any), " +
		"to see what happened around a time (from, to) or to find warnings and errors (minLevel). " +
		"Every level is listed and nothing is ranked. Each record is one line: " +
		"episode-N/<agent>/<file>:<line>: <time> <level> <agent> [<conversation>] <text>. " +
		"An answer holds at most limit records (1 to 500, default 100) and about 24 KiB of text; " +
		"when more follow it gives a cursor: call records again with the same arguments and that cursor to read on.",
	input: func(s *jsonschema.Schema) {
		s.Required = []string{"episode"}
		bound(s, "limit", 1, MaxRecordsLimit, DefaultRecordsLimit)
		s.Properties["minLevel"].Enum = []any{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}
	},
}

type recordsInput struct {
	Episode      string `json:"episode" jsonschema:"the episode, as episode-N (run_info lists them)"`
	Conversation string `json:"conversation,omitempty" jsonschema:"only the records written in this conversation (- for those written outside any); absent: every record of the episode"`
	Agent        string `json:"agent,omitempty" jsonschema:"only this agent's files (an agent folder's name, as run_info lists them)"`
	MinLevel     string `json:"minLevel,omitempty" jsonschema:"only records with a level at or above this one; records without a level (history records) are left out"`
	From         string `json:"from,omitempty" jsonschema:"only records at this time or later, as yyyy-MM-dd HH:mm:ss (to the second)"`
	To           string `json:"to,omitempty" jsonschema:"only records at this time or earlier, as yyyy-MM-dd HH:mm:ss (to the second, inclusive)"`
	Limit        int    `json:"limit,omitempty" jsonschema:"at most this many records, 1 to 500"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"the cursor of the previous answer, given with the same other arguments, to read on"`
}

// recordsOutput is the run/records result, its locations made relative.
type recordsOutput struct {
	Records []recordItem `json:"records"`
	Cursor  string       `json:"cursor,omitempty" jsonschema:"more records follow: call records again with the same arguments and this cursor; absent on the answer that ends the list"`
	// Stopped reports that the size bound ended the answer before limit.
	Stopped bool `json:"stopped,omitempty" jsonschema:"the answer's size bound ended it before limit records: the cursor reads on from there"`
}

type recordItem struct {
	Location     recordLocation `json:"location"`
	Time         string         `json:"time,omitempty" jsonschema:"the record's time as written (yyyy-MM-dd HH:mm:ss, with ,SSS or .SSS when written so); absent for a line before a file's first record"`
	Level        string         `json:"level,omitempty" jsonschema:"TRACE, DEBUG, INFO, WARN or ERROR; absent for history records"`
	State        string         `json:"state" jsonschema:"the episode state written with the record"`
	Conversation string         `json:"conversation,omitempty" jsonschema:"the conversation it was written in (- for none); absent for records without the field"`
	Agent        string         `json:"agent"`
	Episode      string         `json:"episode"`
	Text         string         `json:"text" jsonschema:"the record's text: its first line after the fields, then its other lines, joined with newlines"`
	Cut          bool           `json:"cut,omitempty" jsonschema:"the text is cut to bound the answer: read the record's lines for all of it"`
}

// recordLocation is the lines of a file of the run that a record spans.
type recordLocation struct {
	Path    string `json:"path" jsonschema:"the file's path relative to the run folder"`
	Line    int    `json:"line" jsonschema:"the record's first line, 1-based"`
	EndLine int    `json:"endLine" jsonschema:"its last line, 1-based"`
}

func (s *Server) records(ctx context.Context, in recordsInput) (recordsOutput, string, error) {
	req := retriever.RecordsRequest{
		Episode: in.Episode, Conversation: in.Conversation, Agent: in.Agent, MinLevel: in.MinLevel,
		From: in.From, To: in.To, Limit: in.Limit, Cursor: in.Cursor,
	}
	if req.Limit == 0 {
		req.Limit = DefaultRecordsLimit
	}
	if req.Limit < 1 || req.Limit > MaxRecordsLimit {
		return recordsOutput{}, "", &retriever.FieldError{Field: "limit", Value: strconv.Itoa(req.Limit), Reason: "want 1 to " + strconv.Itoa(MaxRecordsLimit)}
	}
	res, err := s.eng.Records(ctx, req)
	if err != nil {
		return recordsOutput{}, "", err
	}
	out := recordsOutput{Records: make([]recordItem, 0, len(res.Records))}
	if res.Cursor != nil {
		out.Cursor = *res.Cursor
	}
	budget := MaxAnswerTextBytes
	for i, r := range res.Records {
		item := recordItem{
			Location: recordLocation{Path: r.File, Line: r.Location.Range.Start.Line + 1, EndLine: r.Location.Range.End.Line + 1},
			State:    r.State, Agent: r.Agent, Episode: r.Episode, Text: r.Text,
		}
		if r.Time != nil {
			item.Time = *r.Time
		}
		if r.Level != nil {
			item.Level = *r.Level
		}
		if r.Conversation != nil {
			item.Conversation = *r.Conversation
		}
		if len(item.Text) > budget {
			if i > 0 {
				// Whole records only: the rest comes with the next call.
				out.Stopped, out.Cursor = true, res.CursorAfter(i-1)
				break
			}
			item.Text, item.Cut = retriever.CutText(item.Text, budget), true
			if i+1 < len(res.Records) {
				out.Stopped, out.Cursor = true, res.CursorAfter(i)
			}
		}
		budget -= len(item.Text)
		out.Records = append(out.Records, item)
		if item.Cut {
			break
		}
	}
	return out, renderRecords(out), nil
}

// renderRecords is the compact text of a records answer: one line per record.
func renderRecords(out recordsOutput) string {
	var b strings.Builder
	for _, r := range out.Records {
		head := []string{fmt.Sprintf("%s:%d:", r.Location.Path, r.Location.Line)}
		for _, f := range []string{r.Time, r.Level, r.Agent} {
			if f != "" {
				head = append(head, f)
			}
		}
		if r.Conversation != "" {
			head = append(head, "["+r.Conversation+"]")
		}
		fmt.Fprintf(&b, "%s %s", strings.Join(head, " "), oneLine(r.Text))
		if r.Cut {
			b.WriteString(" […]")
		}
		b.WriteByte('\n')
	}
	switch {
	case len(out.Records) == 0:
		b.WriteString("no records.\n")
	case out.Stopped:
		fmt.Fprintf(&b, "(stopped to bound the answer: call records again with cursor %q to read on.)\n", out.Cursor)
	case out.Cursor != "":
		fmt.Fprintf(&b, "(more records follow: call records again with cursor %q.)\n", out.Cursor)
	}
	if len(out.Records) > 0 && out.Records[len(out.Records)-1].Cut {
		b.WriteString("(the text marked […] was cut to bound the answer: read its lines for the rest.)\n")
	}
	return b.String()
}
