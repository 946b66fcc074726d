package retriever

import (
	"context"
	"errors"
	"slices"
	"strings"

	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// Conversation summaries: what an editor's picker shows of each
// conversation of an episode before it lists one (the VS Code command
// "Show Conversation"): its agents, how many records it has, its time
// span and a line that says what it is about. They come from the record
// tables (one pass over the episode's columns, no file read) and, for the
// span's ends and the line, a few records read back.

// ConversationSummary describes one conversation of an episode.
type ConversationSummary struct {
	// Conversation is the id as written (as run/info lists it, unmasked:
	// it is what run/records is asked with).
	Conversation string   `json:"conversation"`
	Agents       []string `json:"agents"`
	Records      int      `json:"records"`
	// First and Last are the times, as written, of its earliest and latest
	// records.
	First string `json:"first"`
	Last  string `json:"last"`
	// Line is the first line of the message of its first told or said
	// record among its first summaryScan records (with an interpreter that
	// has told or said rules), else the first line of its first record's
	// evidence text; cut at summaryLineChars characters, masked as text is.
	Line string `json:"line"`
}

// summaryScan is how many of a conversation's first records are read to
// find a told or said one: its opening message is near its start, and a
// picker must not read a whole conversation.
const summaryScan = 50

// summaryLineChars bounds a summary's line (a picker shows one line).
const summaryLineChars = 200

// Conversations summarises the conversations of an episode (records of
// record files written in a conversation; "-" is one too), in natural
// order of their ids as the editors list them (conv-2 before conv-10).
func (ix *Index) Conversations(ctx context.Context, episode string) ([]ConversationSummary, error) {
	return viewed(ctx, ix, "listing conversations", func() ([]ConversationSummary, error) { return ix.conversationsView(ctx, episode) })
}

func (ix *Index) conversationsView(ctx context.Context, episode string) ([]ConversationSummary, error) {
	q, err := RecordsRequest{Episode: episode}.parse()
	if err != nil {
		return nil, err
	}
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return nil, err
	}
	out, err := ix.conversations(ctx, q)
	if errors.Is(err, ErrChanged) {
		if _, err := ix.Refresh(ctx, nil); err != nil {
			return nil, err
		}
		out, err = ix.conversations(ctx, q)
	}
	return out, err
}

func (ix *Index) conversations(ctx context.Context, q *records.Query) ([]ConversationSummary, error) {
	type place struct {
		file, rec int
		key       int64
	}
	type acc struct {
		records     int
		agents      map[string]bool
		first, last place
	}
	ef := ix.episodeRecordFiles(q)
	files, agents := ef.states, ef.agents
	byConv := map[uint32]*acc{}
	for f, fs := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := fs.Records()
		for i := 0; i < t.Len(); i++ {
			c := t.Conv(i)
			if c == 0 {
				continue
			}
			k := t.Time(i)
			a := byConv[c]
			if a == nil {
				a = &acc{agents: map[string]bool{}, first: place{f, i, k}, last: place{f, i, k}}
				byConv[c] = a
			}
			a.records++
			a.agents[agents[f]] = true
			// Files come by path and records by line: strict comparisons keep
			// the first in the order of run/records.
			if k < a.first.key {
				a.first = place{f, i, k}
			}
			if k >= a.last.key {
				a.last = place{f, i, k}
			}
		}
	}
	out := make([]ConversationSummary, 0, len(byConv))
	for c, a := range byConv {
		s := ConversationSummary{Conversation: ix.state.Convs.Name(c), Agents: sortedKeys(a.agents), Records: a.records}
		var err error
		if s.First, err = ix.rb.recordStamp(files[a.first.file], a.first.rec); err != nil {
			return nil, err
		}
		if s.Last, err = ix.rb.recordStamp(files[a.last.file], a.last.rec); err != nil {
			return nil, err
		}
		if s.Line, err = ix.summaryLine(ctx, q, ix.state.Convs.Name(c)); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ConversationSummary) int { return naturalCompare(a.Conversation, b.Conversation) })
	return out, nil
}

// recordStamp is record i's time as written.
func (rb *readBack) recordStamp(fs *corpus.File, i int) (string, error) {
	line := fs.Records().Line(i)
	lines, err := rb.readLines(context.Background(), fs, line, line+1)
	if err != nil {
		return "", err
	}
	head := lines[0]
	return string(head[:recordformat.StampLen(head)]), nil
}

// summaryLine is a conversation's line (ConversationSummary.Line).
func (ix *Index) summaryLine(ctx context.Context, episode *records.Query, conv string) (string, error) {
	q := *episode
	q.Conv, q.HasConv, q.Limit = conv, true, summaryScan
	page, err := ix.records(ctx, &q, nil)
	if err != nil || len(page.Records) == 0 {
		return "", err
	}
	line := page.Records[0].Text
	for _, r := range page.Records {
		if reading, start, end := ix.interpreter.Read(r.Text); reading == ReadingTold || reading == ReadingSaid {
			line = string(reading) + ": " + r.Text[start:end]
			break
		}
	}
	line, _, _ = strings.Cut(line, "\n")
	if r := []rune(line); len(r) > summaryLineChars {
		line = string(r[:summaryLineChars-1]) + "…"
	}
	return line, nil
}

// naturalCompare orders ids as people read them: runs of digits by their
// number (conv-2 before conv-10), the rest byte-wise, equal numbers written
// differently (07, 7) by their text.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			if c := strings.Compare(a[:da], b[:db]); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
