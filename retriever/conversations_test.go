package retriever

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestConversations: the summaries of an episode's conversations on the
// table tests' run (equal times across agents, a file whose times go back,
// "-", unfielded records and files that are never listed), with and without
// an interpreter, and their natural order.
func TestConversations(t *testing.T) {
	root := writeRun(t, orderRun)
	in, err := ParseInterpreter([]byte(`{"rules": [
		{"match": "^(?P<agent>\\S+) was told: (?P<text>(?s).*)$", "reading": "told"},
		{"match": "^(?P<agent>\\S+) said: (?P<text>(?s).*)$", "reading": "said"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	base := []ConversationSummary{
		{Conversation: "-", Agents: []string{"alice"}, Records: 1, First: "2026-10-21 18:00:02", Last: "2026-10-21 18:00:02", Line: "Alice idle"},
		{Conversation: "conv-1", Agents: []string{"alice", "bob"}, Records: 6, First: "2026-10-21 18:00:00", Last: "2026-10-21 18:00:02", Line: "Alice was told: go"},
		{Conversation: "conv-2", Agents: []string{"bob"}, Records: 1, First: "2026-10-21 18:00:00", Last: "2026-10-21 18:00:00", Line: "Bob back in time"},
	}
	told := append([]ConversationSummary(nil), base...)
	told[1].Line = "told: go"
	for _, tc := range []struct {
		name string
		opts Options
		ep   string
		want []ConversationSummary
	}{
		{"default interpreter", Options{Root: root}, "episode-1", base},
		{"told and said", Options{Root: root, Interpreter: in}, "episode-1", told},
		{"another episode", Options{Root: root}, "episode-2", []ConversationSummary{
			{Conversation: "conv-1", Agents: []string{"alice"}, Records: 1, First: "2026-10-20 10:00:00", Last: "2026-10-20 10:00:00", Line: "another episode"}}},
		{"no such folder", Options{Root: root}, "episode-9", []ConversationSummary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, tc.opts)
			got, err := ix.Conversations(context.Background(), tc.ep)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Conversations(%s) =\n%+v\nwant\n%+v", tc.ep, got, tc.want)
			}
		})
	}
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Conversations(context.Background(), "episode-x"); err == nil || !strings.Contains(err.Error(), "episode") {
		t.Errorf("Conversations(episode-x) = %v, want an error naming episode", err)
	}
}

// TestConversationsLongLineAndOrder: a conversation's line is its first line,
// cut at summaryLineChars; ids come in natural order.
func TestConversationsLongLineAndOrder(t *testing.T) {
	long := strings.Repeat("é", 300)
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/a.history": "" +
			"2026-10-21 18:00:00 [running] [conv-10] A " + long + "\n  second line\n" +
			"2026-10-21 18:00:01 [running] [conv-2] A two\n" +
			"2026-10-21 18:00:02 [running] [conv-1] A one\n",
	})})
	got, err := ix.Conversations(context.Background(), "episode-1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.Conversation)
	}
	if want := []string{"conv-1", "conv-2", "conv-10"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("order %v, want %v", ids, want)
	}
	if line := got[2].Line; len([]rune(line)) != summaryLineChars || !strings.HasPrefix(line, "A é") || !strings.HasSuffix(line, "…") {
		t.Errorf("line %q: want its first %d characters, the last an ellipsis", line, summaryLineChars)
	}
}

func TestNaturalCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"conv-2", "conv-10", -1}, {"conv-10", "conv-2", 1}, {"conv-1", "conv-1", 0},
		{"07", "7", -1}, {"a", "b", -1}, {"conv", "conv-1", -1}, {"-", "conv-1", -1},
	} {
		if got := naturalCompare(tc.a, tc.b); (got > 0) != (tc.want > 0) || (got < 0) != (tc.want < 0) {
			t.Errorf("naturalCompare(%q, %q) = %d, want sign %d", tc.a, tc.b, got, tc.want)
		}
	}
}
