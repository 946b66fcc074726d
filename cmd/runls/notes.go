package main

import (
	"fmt"
	"io"
	"strings"

	"runls/retriever"
)

// The notes `runls search` prints on stderr after its results (spec §12):
// one line for each notice (a request value the run does not hold), and one
// for what the filters hid, each count with the flag that would show it.

// notePrefix begins every such line.
const notePrefix = "runls: note: "

// printNotes writes the notes of a result for req.
func printNotes(w io.Writer, req retriever.Request, res retriever.Result) {
	printNotices(w, res.Notices)
	if line := hiddenNote(req, res.Hidden); line != "" {
		fmt.Fprintln(w, notePrefix+line)
	}
}

// printNotices writes a line for each notice, with the flag that would
// give the suggested value.
func printNotices(w io.Writer, notices []retriever.Notice) {
	for _, n := range notices {
		line := n.Message
		if n.Suggestion != nil {
			line += fmt.Sprintf("; try --%s %s", n.Field, *n.Suggestion)
		}
		fmt.Fprintln(w, notePrefix+line)
	}
}

// hiddenNote says in one line what the filters hid, or "" when nothing.
func hiddenNote(req retriever.Request, h retriever.Hidden) string {
	if h.Total() == 0 {
		return ""
	}
	var parts []string
	if h.Scope > 0 {
		parts = append(parts, fmt.Sprintf("%d outside %s (--scope run)", h.Scope, episodeOrNone(req)))
	}
	if h.NoContext > 0 {
		parts = append(parts, fmt.Sprintf("%d in record files, searched only with both --episode and --conversation", h.NoContext))
	}
	if h.Unfielded > 0 {
		parts = append(parts, fmt.Sprintf("%d without the conversation field in %s, the current episode (searched from another --episode)", h.Unfielded, req.Episode))
	}
	if h.OtherConversation > 0 {
		parts = append(parts, fmt.Sprintf("%d in other conversations of %s (--all-conversations)", h.OtherConversation, req.Episode))
	}
	return fmt.Sprintf("the filters hid %d of the %d best pieces: %s", h.Total(), topK(req), strings.Join(parts, "; "))
}

func episodeOrNone(req retriever.Request) string {
	if req.Episode == "" {
		return "the current episode (none given)"
	}
	return req.Episode
}

func topK(req retriever.Request) int {
	if req.TopK == 0 {
		return retriever.DefaultTopK
	}
	return req.TopK
}
