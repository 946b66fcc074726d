package mcpserver

// This file holds the read tool: lines of an agent file, by the path and
// line a search hit gives.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"runls/retriever"
)

var readTool = toolSpec{
	name:  "read",
	title: "Read lines of an agent file",
	description: "Read lines of one of the agents' files, as written (timestamps and all), to see a search hit in its context: " +
		"a whole record, the lines before and after it. " +
		"Give path as a search hit gives it (episode-N/<agent>/<file>, relative to the run folder) and the lines to read " +
		"(startLine and endLine, 1-based, inclusive, at most 200 lines; default: 100 lines from startLine). " +
		"Only agents' files are read: nothing outside the run folder, no links.",
	input: func(s *jsonschema.Schema) {
		s.Required = []string{"path"}
		bound(s, "startLine", 1, 1<<31-1, 1)
		bound(s, "endLine", 1, 1<<31-1, 0)
	},
}

type readInput struct {
	Path      string `json:"path" jsonschema:"the file's path relative to the run folder, as search hits give it: episode-N/<agent>/<file>"`
	StartLine int    `json:"startLine,omitempty" jsonschema:"the first line to read, 1-based"`
	EndLine   int    `json:"endLine,omitempty" jsonschema:"the last line to read, 1-based, inclusive: at most startLine+199 (default startLine+99)"`
}

type readOutput struct {
	Path    string     `json:"path"`
	Agent   string     `json:"agent"`
	Episode string     `json:"episode"`
	Lines   []readLine `json:"lines"`
	// EndOfFile reports that the file has no line after the last one given.
	EndOfFile bool `json:"endOfFile" jsonschema:"the file has no line after the last one given"`
	// Stopped reports that the size bound ended the answer before endLine.
	Stopped bool `json:"stopped,omitempty" jsonschema:"the answer's size bound ended it before endLine: read on from the line after the last one given"`
}

type readLine struct {
	Line int    `json:"line" jsonschema:"1-based line number"`
	Text string `json:"text" jsonschema:"the line as written, without its line end"`
	Cut  bool   `json:"cut,omitempty" jsonschema:"the line is longer: its text is cut"`
}

func (s *Server) read(ctx context.Context, in readInput) (readOutput, string, error) {
	start := in.StartLine
	if start == 0 {
		start = 1
	}
	end := in.EndLine
	if end == 0 {
		end = start + DefaultReadLines - 1
	}
	if end < start {
		return readOutput{}, "", &retriever.FieldError{Field: "endLine", Value: strconv.Itoa(end), Reason: "want a line from startLine " + strconv.Itoa(start) + " on"}
	}
	if end-start+1 > MaxReadLines {
		return readOutput{}, "", &retriever.FieldError{Field: "endLine", Value: strconv.Itoa(end),
			Reason: fmt.Sprintf("at most %d lines are read at once: want at most %d", MaxReadLines, start+MaxReadLines-1)}
	}
	lines, err := s.eng.ReadLines(ctx, retriever.ReadRequest{
		Path: in.Path, First: start, Count: end - start + 1, MaxLineBytes: MaxLineBytes, MaxBytes: MaxAnswerTextBytes,
	})
	if err != nil {
		return readOutput{}, "", err
	}
	out := readOutput{Path: lines.File, Agent: lines.Agent, Episode: lines.Episode, Lines: make([]readLine, 0, len(lines.Lines)),
		EndOfFile: lines.EOF, Stopped: lines.Stopped}
	for _, l := range lines.Lines {
		out.Lines = append(out.Lines, readLine{Line: l.Number, Text: l.Text, Cut: l.Cut})
	}
	return out, renderRead(out), nil
}

// renderRead is the compact text of a read: one line per line of the file.
func renderRead(out readOutput) string {
	var b strings.Builder
	cut := false
	for _, l := range out.Lines {
		fmt.Fprintf(&b, "%s:%d: %s", out.Path, l.Line, oneLine(l.Text))
		if l.Cut {
			b.WriteString(" […]")
			cut = true
		}
		b.WriteByte('\n')
	}
	switch {
	case out.Stopped && len(out.Lines) > 0:
		fmt.Fprintf(&b, "(stopped to bound the answer: read on from line %d.)\n", out.Lines[len(out.Lines)-1].Line+1)
	case out.EndOfFile:
		b.WriteString("(end of file.)\n")
	}
	if cut {
		fmt.Fprintf(&b, "(lines marked […] are longer than %d bytes and were cut.)\n", MaxLineBytes)
	}
	return b.String()
}
