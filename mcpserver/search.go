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

	"runls/recordformat"
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
	whileIndexing: true,
	output: func(s *jsonschema.Schema) {
		s.Description = "The run/search result of runls' language server (items best first, hidden, notices), " +
			"with each location a path relative to the run folder and a 1-based line, and each field that run/search sends as null left out."
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
	From         string `json:"from,omitempty" jsonschema:"only records at this time or later, as yyyy-MM-dd HH:mm:ss (to the second); with from or to, notes and lines without a time are left out"`
	To           string `json:"to,omitempty" jsonschema:"only records at this time or earlier, as yyyy-MM-dd HH:mm:ss (to the second, inclusive)"`
}

// searchOutput is the run/search result (spec §9, §12): its items with
// every field, what the filters hid and the notices, each location made a
// path relative to the run folder and a 1-based line, and a field that
// run/search sends as null left out.
type searchOutput struct {
	Items   []searchItem `json:"items"`
	Hidden  hiddenCounts `json:"hidden" jsonschema:"how many of the best pieces the request's episode, conversation and scope rules kept out, by the first rule that did ({} when none)"`
	Notices []notice     `json:"notices" jsonschema:"request values the run does not hold (an agent, episode or conversation it has no such one of), and while the run is being indexed how much of it is; the search is made as asked all the same"`
	// Cut reports that texts were cut to bound the answer (runls' own).
	Cut bool `json:"cut,omitempty" jsonschema:"some texts were cut to bound the answer (each such item says so)"`
}

type searchItem struct {
	Location     location `json:"location"`
	Score        float64  `json:"score" jsonschema:"the BM25 score: higher ranks first"`
	Text         string   `json:"text" jsonschema:"the piece of evidence: one line of a record or note, at most 2000 characters"`
	Cut          bool     `json:"cut,omitempty" jsonschema:"the text is cut: read the line for all of it"`
	Agent        string   `json:"agent"`
	Episode      string   `json:"episode"`
	Conversation string   `json:"conversation,omitempty" jsonschema:"the conversation the record was written in (- for none); absent for notes and records without the field"`
	Reading      string   `json:"reading" jsonschema:"note, told (a message the agent was told) or said (a message the agent said)"`
	Time         string   `json:"time,omitempty" jsonschema:"the record's time as written (yyyy-MM-dd HH:mm:ss, with ,SSS or .SSS when written so); absent for notes and a line before a file's first record"`
	Level        string   `json:"level,omitempty" jsonschema:"the log record's level (TRACE, DEBUG, INFO, WARN, ERROR); absent for history records and notes"`
	Matches      [][2]int `json:"matches" jsonschema:"where the query's terms occur in text: [start, end) in UTF-16 code units, in order"`
}

// hiddenCounts is run/search's hidden (spec §12): a count of zero is left out.
type hiddenCounts struct {
	Scope             int `json:"scope,omitempty" jsonschema:"in other episodes than the current one, with scope episode"`
	NoContext         int `json:"noContext,omitempty" jsonschema:"in record files, searched only when both episode and conversation are given"`
	Unfielded         int `json:"unfielded,omitempty" jsonschema:"records of the current episode without the conversation field"`
	OtherConversation int `json:"otherConversation,omitempty" jsonschema:"records of the current episode written in another conversation"`
}

// notice is run/search's notice (spec §12), its null suggestion left out.
type notice struct {
	Field      string `json:"field" jsonschema:"the request field (agent, episode, conversation), or indexing"`
	Value      string `json:"value" jsonschema:"its value (for indexing: the share of the run indexed, as 40%)"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty" jsonschema:"the value the run holds that was probably meant (an agent whose name differs only in case)"`
}

// location is a line of a file of the run.
type location struct {
	Path string `json:"path" jsonschema:"the file's path relative to the run folder"`
	Line int    `json:"line" jsonschema:"1-based line number"`
}

func (s *Server) search(ctx context.Context, in searchInput) (searchOutput, string, error) {
	req := retriever.Request{
		TurnMessage: in.TurnMessage, Query: in.Query, Agent: in.Agent, Episode: in.Episode,
		Conversation: in.Conversation, Scope: in.Scope, TopK: in.TopK, From: in.From, To: in.To,
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
	ask := s.eng.Search
	if ps, ok := s.eng.(PartialSearcher); ok && !s.index.indexed() {
		ask = ps.SearchPartial
	}
	res, err := ask(ctx, req)
	if err != nil {
		return searchOutput{}, "", err
	}
	out := searchOutput{
		Items:   make([]searchItem, 0, len(res.Items)),
		Hidden:  hiddenCounts(res.Hidden),
		Notices: make([]notice, 0, len(res.Notices)),
	}
	for _, n := range res.Notices {
		out.Notices = append(out.Notices, notice{Field: n.Field, Value: n.Value, Message: n.Message, Suggestion: deref(n.Suggestion)})
	}
	lengths := make([]int, len(res.Items))
	for i, it := range res.Items {
		lengths[i] = len(it.Text)
	}
	share := fairShare(lengths, MaxAnswerTextBytes)
	for _, it := range res.Items {
		item := searchItem{
			Location: location{Path: it.File, Line: it.Location.Range.Start.Line + 1},
			Score:    it.Score, Text: it.Text, Agent: it.Agent, Episode: it.Episode, Reading: string(it.Reading),
			Conversation: deref(it.Conversation), Time: deref(it.Time), Level: deref(it.Level),
			Matches: it.Matches,
		}
		if len(item.Text) > share {
			item.Text, item.Cut, out.Cut = retriever.CutText(item.Text, share), true, true
			item.Matches = matchesWithin(item.Matches, item.Text)
		}
		if item.Matches == nil {
			item.Matches = [][2]int{}
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

// renderSearch is the compact text of a search: one line per hit, then
// what the filters hid and the notices, in words.
func renderSearch(req retriever.Request, out searchOutput) string {
	var b strings.Builder
	// A partial answer says so before its first hit: a model that reads
	// the hits must not take them for all the run holds.
	for _, n := range out.Notices {
		if n.Field == retriever.IndexingField {
			fmt.Fprintf(&b, "(partial answer: the run is still being indexed, %s of it so far: these hits come from that part only; search again once run_info says indexing is done for the whole answer.)\n", n.Value)
		}
	}
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
	if (req.Episode == "" || req.Conversation == "") && out.Hidden.NoContext == 0 {
		b.WriteString("(records of .history and .log files were not searched: give both episode and conversation to search them.)\n")
	}
	if out.Cut {
		b.WriteString("(texts marked […] were cut to bound the answer: read their lines for the rest.)\n")
	}
	if line := hiddenWords(req, out.Hidden); line != "" {
		b.WriteString(line + "\n")
	}
	for _, n := range out.Notices {
		if n.Field == retriever.IndexingField {
			continue // said first
		}
		line := "(note: " + oneLine(n.Message)
		if n.Suggestion != "" {
			line += fmt.Sprintf("; try %s %q", n.Field, n.Suggestion)
		}
		b.WriteString(line + ".)\n")
	}
	return b.String()
}

// hiddenWords says what the filters hid, each count with the argument that
// would show it; "" when nothing was hidden.
func hiddenWords(req retriever.Request, h hiddenCounts) string {
	if h == (hiddenCounts{}) {
		return ""
	}
	var parts []string
	if h.Scope > 0 {
		parts = append(parts, fmt.Sprintf("%d in other episodes than %s (give scope run to see them)", h.Scope, orNone(req.Episode)))
	}
	if h.NoContext > 0 {
		parts = append(parts, fmt.Sprintf("%d in .history and .log records, searched only when both episode and conversation are given", h.NoContext))
	}
	if h.Unfielded > 0 {
		parts = append(parts, fmt.Sprintf("%d in records of %s without the conversation field (searched only from another episode)", h.Unfielded, req.Episode))
	}
	if h.OtherConversation > 0 {
		parts = append(parts, fmt.Sprintf("%d in other conversations of %s (give one of them as conversation to see them)", h.OtherConversation, req.Episode))
	}
	total := h.Scope + h.NoContext + h.Unfielded + h.OtherConversation
	return fmt.Sprintf("(the filters hid %d of the %d best pieces: %s.)", total, req.TopK, strings.Join(parts, "; "))
}

// orNone names an episode, or says that none was given.
func orNone(episode string) string {
	if episode == "" {
		return "the current one (none given)"
	}
	return episode
}

// oneLine keeps a text on its line of the rendering.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// matchesWithin keeps the match ranges that lie within a cut text, the one
// the cut ends cut short with it.
func matchesWithin(matches [][2]int, text string) [][2]int {
	units := recordformat.UTF16Len([]byte(text))
	out := make([][2]int, 0, len(matches))
	for _, m := range matches {
		if m[0] >= units {
			break
		}
		out = append(out, [2]int{m[0], min(m[1], units)})
	}
	return out
}

// deref is a string that run/search sends as null ("" then), as a tool
// leaves it out.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
