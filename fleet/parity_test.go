package fleet

// Parity (issue 32): one run shipped, the fleet's search restricted to it
// answers as runls search on the folder: the same top-10 pieces (locations,
// order, texts, fields; scores within 1e-6), the same hidden counts and
// notices, over the benchmark's queries and the evidence-rule cases.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"runls/internal/rungen"
	"runls/retriever"
)

// ruleCases are the evidence-rule cases: episode, conversation, scope,
// agent, levels, leftOut (the interpreter's), told turn messages, from/to.
func ruleCases(queries []string) []retriever.Request {
	var out []retriever.Request
	for _, q := range queries {
		out = append(out,
			retriever.Request{Query: q, TopK: 10},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-2", Conversation: "conv-1"},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-02", Conversation: "conv-2", Scope: "episode"},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-2", Conversation: "-"},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-1", Conversation: "conv-1"},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-2", Conversation: "conv-1", AllConversations: true},
			retriever.Request{Query: q, TopK: 10, Scope: "episode"},
			retriever.Request{Query: q, TopK: 10, Agent: "alice", Episode: "episode-2", Conversation: "conv-1"},
			retriever.Request{Query: q, TopK: 10, Agent: "Alice", Episode: "episode-9", Conversation: "conv-7"},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-2", Conversation: "nope"},
			retriever.Request{Query: q, TopK: 10, Episode: "episode-2", Conversation: "conv-1", From: "2026-10-21 18:00:02", To: "2026-10-21 18:03:30"},
			retriever.Request{Query: q, TopK: 10, From: "2026-10-21 18:01:00"},
		)
	}
	return out
}

func TestParitySampleRun(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	root := "../testdata/sample-run"
	rules := "../testdata/interpreter.json"
	for _, mask := range []bool{true, false} {
		id := fmt.Sprintf("sample-mask-%v", mask)
		shipRun(t, st, root, id, mask, rules)
		ix := openRun(t, root, mask, rules)
		queries := []string{"deploy staging", "billing migration timeout", "hotel booking", "Alice chat started",
			"settings reloaded", "exception stack trace", "Bob", "Lisbon rooms nights", "budget", "retro"}
		reqs := ruleCases(queries)
		reqs = append(reqs,
			retriever.Request{TurnMessage: "Deploy the billing service once the database migration passes.", TopK: 10, Episode: "episode-2", Conversation: "conv-1"},
			retriever.Request{TurnMessage: "Book the hotel for the Lisbon offsite, four rooms, three nights.", TopK: 10, Episode: "episode-2", Conversation: "conv-2"})
		for _, req := range reqs {
			compare(t, ix, st, id, req)
		}
		checkCompared(t)
	}
}

func TestParityGeneratedRun(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	opts := rungen.Options{Bytes: 3 << 20, Seed: 7, Episodes: 3, Agents: 3, Workers: 2}
	root := filepath.Join(t.TempDir(), "run")
	if _, err := rungen.Generate(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	shipRun(t, st, root, "gen", true, "")
	ix := openRun(t, root, true, "")
	queries := rungen.Queries(opts, 13)
	for _, q := range queries {
		for _, req := range []retriever.Request{
			{Query: q, TopK: 10},
			{Query: q, TopK: 10, Episode: "episode-2", Conversation: "conv-3"},
			{Query: q, TopK: 10, Episode: "episode-1", Conversation: "conv-1"},
			{Query: q, TopK: 10, Episode: "episode-3", Conversation: "conv-2", Scope: "episode"},
			{Query: q, TopK: 10, Agent: rungen.AgentNames(3)[1], Episode: "episode-2", Conversation: "conv-1"},
		} {
			compare(t, ix, st, "gen", req)
		}
	}
	checkCompared(t)
}

// compare checks one request's fleet answer against the folder's.
func compare(t *testing.T, ix *retriever.Index, st Store, run string, req retriever.Request) {
	t.Helper()
	ctx := context.Background()
	want, err := ix.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// Every candidate ranked: the statistics are the folder's exactly.
	s := &Searcher{Store: st, MaxCandidates: 1 << 30}
	got, err := s.Search(ctx, Request{Request: req, Runs: []string{run}})
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	name := fmt.Sprintf("%s %+v", run, req)
	compared.items += len(want.Items)
	compared.hidden += want.Hidden.Total()
	compared.notices += len(want.Notices)
	if len(got.Items) != len(want.Items) {
		t.Errorf("%s: %d items, want %d\n got %s\nwant %s", name, len(got.Items), len(want.Items), brief(got.Items), briefLocal(want.Items))
		return
	}
	for i, w := range want.Items {
		g := got.Items[i]
		if g.File != w.File || g.Location.Range != w.Location.Range || g.Text != w.Text || g.ByteStart != w.ByteStart {
			t.Errorf("%s: item %d is %s:%v %q, want %s:%v %q", name, i, g.File, g.Location.Range, g.Text, w.File, w.Location.Range, w.Text)
			return
		}
		if math.Abs(g.Score-w.Score) > 1e-6 {
			t.Errorf("%s: item %d scores %v, want %v", name, i, g.Score, w.Score)
		}
		if g.Run != run || g.Agent != w.Agent || g.Episode != w.Episode || g.Reading != w.Reading ||
			!reflect.DeepEqual(g.Conversation, w.Conversation) || !reflect.DeepEqual(g.Time, w.Time) ||
			!reflect.DeepEqual(g.Level, w.Level) || !reflect.DeepEqual(g.Matches, w.Matches) {
			t.Errorf("%s: item %d fields differ:\n got %s %s %s %s conv=%v time=%v level=%v %v\nwant %s %s %s conv=%v time=%v level=%v %v", name, i,
				g.Run, g.Agent, g.Episode, g.Reading, deref(g.Conversation), deref(g.Time), deref(g.Level), g.Matches,
				w.Agent, w.Episode, w.Reading, deref(w.Conversation), deref(w.Time), deref(w.Level), w.Matches)
		}
	}
	if got.Hidden != want.Hidden {
		t.Errorf("%s: hidden %+v, want %+v", name, got.Hidden, want.Hidden)
	}
	if len(got.Notices) != len(want.Notices) {
		t.Errorf("%s: notices %+v, want %+v", name, got.Notices, want.Notices)
		return
	}
	for i, w := range want.Notices {
		g := got.Notices[i]
		if g.Field != w.Field || g.Value != w.Value || !reflect.DeepEqual(g.Suggestion, w.Suggestion) {
			t.Errorf("%s: notice %+v, want %+v", name, g, w)
		}
	}
	rulesAsFilters(t, st, run, req)
}

// rulesAsFilters checks the store's filters for rules 1-4 (used past the
// bound) against the rules runls applies: the records of the candidates
// that they let in are the ones Request.RuleReason lets in.
func rulesAsFilters(t *testing.T, st Store, run string, req retriever.Request) {
	t.Helper()
	ctx := context.Background()
	terms, _ := retriever.QueryTerms(req.RankingText())
	if len(terms) == 0 {
		return
	}
	scope := Scope{Runs: []string{run}, Agent: req.Agent}
	rules := Rules{Episode: req.Episode, Conversation: req.Conversation, ScopeEpisode: req.Scope == "episode", AllConversations: req.AllConversations}
	all, _, err := st.Candidates(ctx, CandidateQuery{Scope: scope, Terms: terms})
	if err != nil {
		t.Fatal(err)
	}
	filtered, _, err := st.Candidates(ctx, CandidateQuery{Scope: scope, Terms: terms, Rules: rules, Filtered: true})
	if err != nil {
		t.Fatal(err)
	}
	// The tallies' n(t) (used past the bound) is the candidates' count.
	stats, err := st.Statistics(ctx, StatsQuery{Scope: scope, Terms: terms})
	if err != nil {
		t.Fatal(err)
	}
	if df := pieceDF(countPieces(all, terms), len(terms)); !reflect.DeepEqual(stats.DF, df) {
		t.Errorf("%+v: the tallies' n(t) %v, the candidates' pieces %v", req, stats.DF, df)
	}
	want := map[string]bool{}
	for i := range all {
		if reason(&Request{Request: req}, &all[i]) == "" {
			want[all[i].Path+":"+fmt.Sprint(all[i].Line)] = true
		}
	}
	got := map[string]bool{}
	for _, e := range filtered {
		got[e.Path+":"+fmt.Sprint(e.Line)] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v: the store's rules let in %d records, runls' %d", req, len(got), len(want))
	}
}

// compared counts what compare checked, so that a test of empty answers fails.
var compared struct{ items, hidden, notices int }

func checkCompared(t *testing.T) {
	t.Helper()
	t.Logf("compared %d items, %d hidden, %d notices", compared.items, compared.hidden, compared.notices)
	if compared.items == 0 || compared.hidden == 0 || compared.notices == 0 {
		t.Errorf("the cases compared no item, hidden count or notice: %+v", compared)
	}
	compared.items, compared.hidden, compared.notices = 0, 0, 0
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func brief(items []Item) string {
	s := ""
	for _, it := range items {
		s += fmt.Sprintf("\n  %s:%d %.6f %q", it.File, it.Location.Range.Start.Line, it.Score, it.Text)
	}
	return s
}

func briefLocal(items []retriever.Item) string {
	s := ""
	for _, it := range items {
		s += fmt.Sprintf("\n  %s:%d %.6f %q", it.File, it.Location.Range.Start.Line, it.Score, it.Text)
	}
	return s
}

// TestParityLayouts: a run of other log layouts, JSON lines and
// transcripts beside the run's own files (spec §2 "Other layouts", "JSON
// lines") ships through the layouts the index reads them in: the fleet
// answers as the folder (foreign records as notes, a JSON line's prose
// placed at its line, a transcript's roles as readings, their times and
// levels).
func TestParityLayouts(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	root := filepath.Join(t.TempDir(), "run")
	samples := map[string]string{
		"own.log": "episode-1/a/a.log", "own.history": "episode-1/a/a.history",
		"claude-session.jsonl": "episode-1/a/session.jsonl", "codex-rollout.jsonl": "episode-1/a/rollout.jsonl",
		"log4j-unpadded.log": "episode-1/tools/shop.log", "python.log": "episode-1/tools/agentbot.log",
		"python-basic.log": "episode-1/tools/basic.log", "syslog3164.log": "episode-1/tools/syslog.log",
		"syslog5424.log": "episode-1/tools/ietf.log", "zap.log": "episode-2/tools/zap.log",
		"slog.jsonl": "episode-2/tools/slog.jsonl", "pino.jsonl": "episode-2/tools/pino.jsonl",
		"iso8601.log": "episode-2/tools/server.log", "logcat.log": "episode-2/tools/logcat.log",
	}
	for name, rel := range samples {
		b, err := os.ReadFile(filepath.Join("..", "recordformat", "testdata", "layouts", name))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, mask := range []bool{true, false} {
		id := fmt.Sprintf("layouts-mask-%v", mask)
		shipRun(t, st, root, id, mask, "../testdata/interpreter.json")
		ix := openRun(t, root, mask, "../testdata/interpreter.json")
		queries := []string{"order payment gateway refused", "tool failed", "cache test flaky", "connection refused",
			"container exited memory", "slow query timeout", "disk full retrying", "handshake error", "note store open",
			"planning step", "deploy", "started"}
		for _, q := range queries {
			for _, req := range []retriever.Request{
				{Query: q, TopK: 10},
				{Query: q, TopK: 10, Episode: "episode-1", Conversation: "conv-1"},
				{Query: q, TopK: 10, Agent: "tools"},
				{Query: q, TopK: 10, Episode: "episode-2", Scope: "episode"},
				{Query: q, TopK: 10, Agent: "Tools", Episode: "episode-9", Conversation: "c"},
			} {
				compare(t, ix, st, id, req)
			}
		}
		// A turn message that is a transcript's user line: told by its
		// role, not by the interpreter, so not left out as the turn's.
		compare(t, ix, st, id, retriever.Request{TurnMessage: "The cache test fails about one run in ten. Can you find out why?", TopK: 10})
		checkCompared(t)
	}
}
