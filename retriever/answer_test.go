package retriever

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"runls/internal/rungen"
	"runls/masking"
	"runls/recordformat"
	"runls/retriever/internal/bm25"
	"runls/retriever/internal/records"
)

func TestMatches(t *testing.T) {
	// 2000 units: "zebra ", 1991 x, " ze"; then "bra zebra"
	long := "zebra " + strings.Repeat("x", MaxPieceChars-9) + " zebra zebra"
	// 1999 units ("zebra ", 996 two-unit emoji, x): the next emoji does not fit, so
	// the second piece starts with it and its ranges count from there.
	longWide := "zebra " + strings.Repeat("😀", (MaxPieceChars-7)/2) + "x😀 zebra zébra Zebra"
	tests := []struct {
		name  string
		line  string // a note's line
		query string
		want  map[string][][2]int // by piece text (a prefix of it)
	}{
		{"several occurrences, any case", "Zebra then zebra, ZEBRA and zebras", "zebra",
			map[string][][2]int{"Zebra then": {{0, 5}, {11, 16}, {18, 23}}}},
		{"several terms in order", "deploy the database migration, then deploy", "migration deploy",
			map[string][][2]int{"deploy the": {{0, 6}, {20, 29}, {36, 42}}}},
		{"a term only where it is whole", "redeploy deployment deploy", "deploy",
			map[string][][2]int{"redeploy": {{20, 26}}}},
		{"Unicode letters, lower-cased", "Über café CAFÉ naïve", "café über",
			map[string][][2]int{"Über": {{0, 4}, {5, 9}, {10, 14}}}},
		{"ranges count UTF-16 units", "😀 zebra 𝒳zebra", "zebra",
			// 😀 is 2 units; 𝒳 (a letter, 2 units) joins the second zebra to one term
			map[string][][2]int{"😀": {{3, 8}}}},
		{"a piece cut at 2000 units: ranges within each piece", long, "zebra",
			map[string][][2]int{"zebra xxx": {{0, 5}}, "bra zebra": {{4, 9}}}},
		{"a piece cut at 2000 units before a surrogate pair", longWide, "zebra",
			map[string][][2]int{"zebra 😀": {{0, 5}}, "😀 zebra": {{3, 8}, {15, 20}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := openTest(t, Options{Root: writeRun(t, map[string]string{"episode-1/a/notes.md": tt.line + "\n"})})
			items := search(t, ix, Request{Query: tt.query, TopK: 10})
			if len(items) != len(tt.want) {
				t.Fatalf("%d items, want %d: %q", len(items), len(tt.want), texts(items))
			}
			for _, it := range items {
				var want [][2]int
				for prefix, w := range tt.want {
					if strings.HasPrefix(it.Text, prefix) {
						want = w
					}
				}
				if !slices.Equal(it.Matches, want) {
					t.Errorf("%.30q: matches %v, want %v", it.Text, it.Matches, want)
				}
				checkMatchesAreTerms(t, it, tt.query)
			}
		})
	}
}

// checkMatchesAreTerms checks that each range of an item is a query term
// (case-folded) of its text.
func checkMatchesAreTerms(t *testing.T, it Item, query string) {
	t.Helper()
	units := utf16.Encode([]rune(it.Text))
	for _, m := range it.Matches {
		word := strings.ToLower(string(utf16.Decode(units[m[0]:m[1]])))
		if !slices.Contains(bm25.Terms(query), word) {
			t.Errorf("%.30q: range %v is %q, not a query term", it.Text, m, word)
		}
	}
}

func TestMatchesOfMaskedText(t *testing.T) {
	token := "gh" + "p_R8sK2mWq9TzX4vLp7NcY3bHd6FjG1aQe5UiO" // a made-up token, written in two parts
	root := writeRun(t, map[string]string{
		"episode-1/a/notes.md": "deploy with key " + token + " from /home/ops/deploy.sh\n",
	})
	ix := openTest(t, Options{Root: root, Masker: masking.HidingOutside(root)})
	items := search(t, ix, Request{Query: "deploy " + token + " home", TopK: 5})
	if len(items) != 1 {
		t.Fatalf("items %q", texts(items))
	}
	it := items[0]
	if strings.Contains(it.Text, "ghp_") || strings.Contains(it.Text, "/home") {
		t.Fatalf("not masked: %q", it.Text)
	}
	// Only the deploy left in the masked text: the hidden key and path give no range.
	if want := [][2]int{{0, 6}}; !slices.Equal(it.Matches, want) {
		t.Errorf("matches %v in %q, want %v", it.Matches, it.Text, want)
	}
}

// FuzzMatchRanges: the ranges are exactly the terms bm25.Scanner cuts text
// into, where they are query terms.
func FuzzMatchRanges(f *testing.F) {
	for _, s := range []string{"Zebra zebra", "Über café", "😀 a𝒳b", "a\xffb", "Σίσυφος ΣΊΣΥΦΟΣ", "İstanbul", strings.Repeat("Long", 17) + " x " + strings.Repeat("ab", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text := strings.ToValidUTF8(s, "\uFFFD")
		var all []string
		var sc bm25.Scanner
		sc.Each([]byte(text), func(term []byte, _, _ uint64) { all = append(all, string(term)) })
		set := map[string]bool{}
		for i, term := range all {
			if i%2 == 0 {
				set[term] = true
			}
		}
		var want []string
		for _, term := range all {
			if set[term] {
				want = append(want, term)
			}
		}
		units := utf16.Encode([]rune(text))
		var got []string
		last := 0
		for _, m := range matchRanges(text, set) {
			if m[0] < last || m[1] <= m[0] || m[1] > len(units) {
				t.Fatalf("%q: bad range %v", text, m)
			}
			last = m[1]
			var scanned []string
			sc.Each([]byte(string(utf16.Decode(units[m[0]:m[1]]))), func(term []byte, _, _ uint64) { scanned = append(scanned, string(term)) })
			if len(scanned) != 1 {
				t.Fatalf("%q: range %v holds %q", text, m, scanned)
			}
			got = append(got, scanned[0])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: matched %q, want %q", text, got, want)
		}
	})
}

func TestItemTimeAndLevel(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/a.log": "zebra before the first record\n" +
			"2026-10-21 18:00:00,123 ERROR [s] [c1] a zebra comma\n" +
			"  zebra continuation\n" +
			"2026-10-21 18:00:01.045 WARN  [s] [c1] a zebra dot\n" +
			"2026-10-21 18:00:02 INFO  [s] [c1] a zebra seconds\n" +
			"2026-13-41 25:61:61 INFO  [s] [c1] a zebra off the clock\n" +
			"2026-10-21 18:00:03 INFO  [s] a zebra unfielded",
		"episode-1/a/a.history": "2026-10-21 18:00:04 [s] [c1] a zebra history\n",
		"episode-1/a/notes.md":  "zebra note 2026-10-21 18:00:05 INFO\n",
	})})
	items := search(t, ix, Request{Query: "zebra", Episode: "episode-2", Conversation: "c1", TopK: 20})
	str := func(s *string) string {
		if s == nil {
			return "null"
		}
		return *s
	}
	got := map[string]string{}
	for _, it := range items {
		got[it.Text] = str(it.Time) + " " + str(it.Level)
	}
	want := map[string]string{
		"zebra before the first record":       "null null",
		"a zebra comma":                       "2026-10-21 18:00:00,123 ERROR",
		"zebra continuation":                  "2026-10-21 18:00:00,123 ERROR",
		"a zebra dot":                         "2026-10-21 18:00:01.045 WARN",
		"a zebra seconds":                     "2026-10-21 18:00:02 INFO",
		"a zebra off the clock":               "2026-13-41 25:61:61 INFO",
		"a zebra unfielded":                   "2026-10-21 18:00:03 INFO", // the last line, pending
		"a zebra history":                     "2026-10-21 18:00:04 null",
		"zebra note 2026-10-21 18:00:05 INFO": "null null",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for text, w := range want {
		if got[text] != w {
			t.Errorf("%q: time and level %q, want %q", text, got[text], w)
		}
	}
}

func FuzzFormatTimeKey(f *testing.F) {
	f.Add("2026-10-21 18:00:00,123 INFO")
	f.Add("0000-00-00 00:00:00.000")
	f.Add("9999-99-99 99:99:99")
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(s)
		n := recordformat.StampLen(line)
		if n == 0 {
			return
		}
		got := records.FormatTimeKey(recordformat.TimeKey(line), n == records.StampWithMillis && line[records.StampSeconds] == '.')
		if got != s[:n] {
			t.Fatalf("%q: formatted %q", s[:n], got)
		}
	})
}

var hiddenRun = map[string]string{
	"episode-1/alice/alice.history": "2026-10-21 18:00:00 [s] [c1] alice zebra one\n" +
		"2026-10-21 18:00:00 [s] [c2] alice zebra zebra two\n" +
		"2026-10-21 18:00:00 [s] alice zebra zebra zebra unfielded\n",
	"episode-2/alice/alice.log": "2026-10-21 18:00:00 INFO  [s] [c1] alice zebra ep2\n" +
		"2026-10-21 18:00:00 INFO  [s] [c2] alice zebra zebra ep2 two\n" +
		"2026-10-21 18:00:00 INFO  [s] [c2] alice zebra zebra same\n",
	"episode-2/bob/notes.md":   "zebra note bob\nalice zebra zebra same\n",
	"episode-1/alice/notes.md": "zebra note alice\n",
}

func TestHidden(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, hiddenRun)})
	tests := []struct {
		name string
		req  Request
		want Hidden
	}{
		{"no context: the records (the text of one is a note's)", Request{TopK: 20}, Hidden{NoContext: 5}},
		{"an episode alone is no context", Request{Episode: "episode-1", TopK: 20}, Hidden{NoContext: 5}},
		// "alice zebra zebra same" of c2 has the text of a note in the result
		{"other conversation and unfielded", Request{Episode: "episode-2", Conversation: "c1", TopK: 20}, Hidden{OtherConversation: 1}},
		{"unfielded in the current episode", Request{Episode: "episode-1", Conversation: "c1", TopK: 20}, Hidden{Unfielded: 1, OtherConversation: 1}},
		{"scope first", Request{Episode: "episode-1", Conversation: "c1", Scope: "episode", TopK: 20}, Hidden{Scope: 4, Unfielded: 1, OtherConversation: 1}},
		{"scope without an episode: all of it", Request{Scope: "episode", TopK: 20}, Hidden{Scope: 8}},
		{"every conversation", Request{Episode: "episode-1", Conversation: "c1", AllConversations: true, TopK: 20}, Hidden{Unfielded: 1}},
		{"top K only: the best of the lifted ranking", Request{Episode: "episode-1", Conversation: "c1", TopK: 1}, Hidden{Unfielded: 1}},
		{"top K only: the best is evidence", Request{Episode: "episode-2", Conversation: "c2", TopK: 1}, Hidden{}},
		{"an unknown agent hides nothing", Request{Agent: "carol", TopK: 20}, Hidden{}},
		{"one agent", Request{Agent: "bob", TopK: 20}, Hidden{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Query = "zebra"
			res := searchResult(t, ix, tt.req)
			if res.Hidden != tt.want {
				t.Errorf("hidden %+v, want %+v (items %q)", res.Hidden, tt.want, texts(res.Items))
			}
			if want := bruteHidden(t, ix, tt.req, res); res.Hidden != want {
				t.Errorf("hidden %+v, brute force %+v", res.Hidden, want)
			}
		})
	}
}

func TestHiddenKeepsTheTurnMessageOut(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/a.history": "2026-10-21 18:00:00 [s] [c2] a was told: deploy zebra\n" +
			"2026-10-21 18:00:00 [s] [c2] a said: zebra deployed\n",
	}), Interpreter: mustRules(t)})
	res, err := ix.Search(context.Background(), Request{TurnMessage: "deploy zebra", Episode: "episode-1", Conversation: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	// The told record of the turn message is not hidden: it would not be returned at all.
	if want := (Hidden{OtherConversation: 1}); res.Hidden != want {
		t.Errorf("hidden %+v, want %+v", res.Hidden, want)
	}
}

func TestNotices(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/alice/alice.history": "2026-10-21 18:00:00 [s] [conv-1] alice zebra\n",
		"episode-2/Alice/notes.md":      "zebra\n",
		"episode-2/ALICE/notes.md":      "zebra\n",
		"episode-2/bob/bob.log":         "2026-10-21 18:00:00 DEBUG [s] [conv-2] bob zebra\n",
		"episode-3/carol/notes.md":      "zebra\n",
	})})
	if err := mkdirRun(ix, "episode-4"); err != nil {
		t.Fatal(err)
	}
	alice := "ALICE"
	tests := []struct {
		name string
		req  Request
		want []Notice
	}{
		{"all known", Request{Agent: "alice", Episode: "episode-1", Conversation: "conv-1"}, []Notice{}},
		{"agent differs only in case: the first byte-wise", Request{Agent: "aLiCe"}, []Notice{
			{Field: "agent", Value: "aLiCe", Message: "the run has no agent folder named aLiCe (ALICE differs only in case)", Suggestion: &alice}}},
		{"unknown agent", Request{Agent: "dave"}, []Notice{{Field: "agent", Value: "dave", Message: "the run has no agent folder named dave"}}},
		{"missing episode, conversation not judged", Request{Episode: "episode-9", Conversation: "conv-99"}, []Notice{
			{Field: "episode", Value: "episode-9", Message: "the run has no folder episode-9"}}},
		{"leading zeros name the episode", Request{Episode: "episode-001", Conversation: "conv-1"}, []Notice{}},
		{"an episode folder without agents exists", Request{Episode: "episode-4"}, []Notice{}},
		{"missing conversation", Request{Episode: "episode-1", Conversation: "conv-99"}, []Notice{
			{Field: "conversation", Value: "conv-99", Message: "no record of episode-1 was written in conversation conv-99"}}},
		{"a conversation of another episode", Request{Episode: "episode-1", Conversation: "conv-2"}, []Notice{
			{Field: "conversation", Value: "conv-2", Message: "no record of episode-1 was written in conversation conv-2"}}},
		{"a conversation of a DEBUG record counts", Request{Episode: "episode-2", Conversation: "conv-2"}, []Notice{}},
		{"any agent's records count", Request{Agent: "carol", Episode: "episode-2", Conversation: "conv-2"}, []Notice{}},
		{"a conversation without an episode is not judged", Request{Conversation: "conv-99"}, []Notice{}},
		{"- is never noticed", Request{Episode: "episode-3", Conversation: "-"}, []Notice{}},
		{"agent and conversation", Request{Agent: "eve", Episode: "episode-3", Conversation: "conv-1"}, []Notice{
			{Field: "agent", Value: "eve", Message: "the run has no agent folder named eve"},
			{Field: "conversation", Value: "conv-1", Message: "no record of episode-3 was written in conversation conv-1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Query = "zebra"
			res := searchResult(t, ix, tt.req)
			if fmt.Sprint(dumpNotices(res.Notices)) != fmt.Sprint(dumpNotices(tt.want)) {
				t.Errorf("notices\n%v\nwant\n%v", dumpNotices(res.Notices), dumpNotices(tt.want))
			}
		})
	}
}

// TestNoticesFollowCommits: the notices' facts are remembered for one
// committed state (factMemo), and each commit makes them found again: a
// conversation written, then its file deleted; an agent folder's file added,
// then deleted. Asked twice at each step, so the second answer is the
// remembered one.
func TestNoticesFollowCommits(t *testing.T) {
	root := writeRun(t, map[string]string{"episode-1/alice/alice.history": "2026-10-21 18:00:00 [s] [conv-1] alice zebra\n"})
	ix := openTest(t, Options{Root: root})
	noticed := func(want ...string) {
		t.Helper()
		for range 2 {
			res := searchResult(t, ix, Request{Query: "zebra", Agent: "bob", Episode: "episode-1", Conversation: "conv-2"})
			var got []string
			for _, n := range res.Notices {
				got = append(got, n.Field)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("notices on %v, want %v", got, want)
			}
		}
	}
	noticed("agent", "conversation")
	writeFile(t, root, "episode-1/bob/bob.history", "2026-10-21 18:00:01 [s] [conv-2] bob zebra\n")
	noticed()
	if err := removeFile(root, "episode-1/bob/bob.history"); err != nil {
		t.Fatal(err)
	}
	noticed("agent", "conversation")
	appendFile(t, root, "episode-1/alice/alice.history", "2026-10-21 18:00:02 [s] [conv-2] alice zebra\n")
	noticed("agent")
}

func mkdirRun(ix *Index, rel string) error {
	if err := ix.fsys.Mkdir(rel, 0o755); err != nil {
		return err
	}
	_, err := ix.Refresh(context.Background(), nil)
	return err
}

func dumpNotices(ns []Notice) []string {
	out := []string{}
	for _, n := range ns {
		s := "nil"
		if n.Suggestion != nil {
			s = *n.Suggestion
		}
		out = append(out, fmt.Sprintf("%s=%s: %s (%s)", n.Field, n.Value, n.Message, s))
	}
	return out
}

// bruteHidden computes a result's hidden counts from scratch (spec §12):
// every piece of the agents searched scored with no pruning, ranked and
// given once with no filter, the top K; then each piece whose text is not
// in the result, under the first reason that its own fields give.
func bruteHidden(t *testing.T, ix *Index, req Request, res Result) Hidden {
	t.Helper()
	inResult := map[string]bool{}
	for _, it := range res.Items {
		inResult[it.Text] = true
	}
	var h Hidden
	for _, it := range bruteItems(ix, bruteTop(bruteHits(t, ix, req), req.topK(), func(hit) bool { return true })) {
		if inResult[it.Text] {
			continue
		}
		switch bruteReason(req, it) {
		case "":
			t.Fatalf("evidence of the lifted ranking is not in the result: %q", it.Text)
		case ReasonScope:
			h.Scope++
		case ReasonNoContext:
			h.NoContext++
		case ReasonUnfielded:
			h.Unfielded++
		case ReasonOtherConversation:
			h.OtherConversation++
		}
	}
	return h
}

// bruteHits is every piece of the agents searched that has a query term,
// scored with no pruning, best first, ties in location order (the told
// records of the turn message left out).
func bruteHits(t *testing.T, ix *Index, req Request) []hit {
	t.Helper()
	lifted := liftedFilter(newFilter(&ix.state, ix.interpreter, req))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	q, err := newQuery(&ix.state, req.rankingText(), req.Agent)
	if err != nil {
		t.Fatal(err)
	}
	var docs, terms int64
	dfs := make([]int64, len(q.Terms))
	for a := range ix.state.Stats.Parts() {
		if q.Part < 0 || q.Part == a {
			n, l, df := ix.state.Stats.Part(a)
			docs += n
			terms += l
			for i, id := range q.Terms {
				if int(id) < len(df) {
					dfs[i] += int64(df[id])
				}
			}
		}
	}
	var hits []hit
	for si, s := range ix.state.Segments {
		acc := map[uint32]float64{}
		for i, id := range q.Terms {
			if dfs[i] == 0 {
				continue
			}
			idf := bm25.IDF(docs, dfs[i])
			s.EachPosting(id, func(doc, tf uint32) {
				acc[doc] += bm25.Score(idf, tf, uint32(s.Len(doc)), float64(terms)/float64(docs))
			})
		}
		for d, score := range acc {
			if s.Dead(d) {
				continue
			}
			id := s.FileOf(d)
			if (&evidenceFilter{ix: ix, f: lifted, agent: q.Part}).Accept(si, d, id) {
				hits = append(hits, hit{score: score, seg: s, doc: d, tag: id, fs: ix.state.File(id)})
			}
		}
	}
	engineHit := func(h hit) bm25.Hit {
		return bm25.Hit{Score: h.score, Seg: slices.Index(ix.state.Segments, h.seg), Doc: h.doc, Group: h.tag}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		if locationBefore(&ix.state, engineHit(a), engineHit(b)) {
			return -1
		}
		return 1
	})
	return hits
}

// bruteItems makes the items of hits.
func bruteItems(ix *Index, hits []hit) []Item {
	ix.mu.RLock()
	agents := make([]string, len(hits))
	for i, h := range hits {
		agents[i] = ix.state.Agents[h.fs.Agent]
	}
	ix.mu.RUnlock()
	return ix.items(hits, agents).Items
}

// bruteTop is the first k of hits that keep says to keep, each text once.
func bruteTop(hits []hit, k int, keep func(hit) bool) []hit {
	var out []hit
	seen := map[uint64]bool{}
	for _, h := range hits {
		hash := h.seg.Key(h.doc)
		if seen[hash] || !keep(h) {
			continue
		}
		seen[hash] = true
		out = append(out, h)
		if len(out) == k {
			break
		}
	}
	return out
}

// bruteReason applies rules 1-4 of spec §5 to an item by its own fields:
// the first that keeps it out, or "".
func bruteReason(req Request, it Item) string {
	current := false
	if req.Episode != "" {
		a, _ := EpisodeNumber(req.Episode)
		b, _ := EpisodeNumber(it.Episode)
		current = a == b
	}
	switch {
	case req.Scope == "episode" && !current:
		return ReasonScope
	case !strings.HasSuffix(it.File, ".log") && !strings.HasSuffix(it.File, ".history"):
		return ""
	case req.Episode == "" || req.Conversation == "":
		return ReasonNoContext
	case current && it.Conversation == nil:
		return ReasonUnfielded
	case current && !req.AllConversations && *it.Conversation != req.Conversation && *it.Conversation != "-":
		return ReasonOtherConversation
	}
	return ""
}

// bruteFiltered is the request's top K, given once among the pieces its
// rules let in (each piece judged by its item's fields).
func bruteFiltered(t *testing.T, ix *Index, req Request) []Item {
	keep := func(h hit) bool { return bruteReason(req, bruteItems(ix, []hit{h})[0]) == "" }
	return bruteItems(ix, bruteTop(bruteHits(t, ix, req), req.topK(), keep))
}

// TestHiddenAgainstBruteForce: random small runs and requests, the hidden
// counts against bruteHidden, and the result against the filtered ranking
// made from scratch (the one-ranking shortcut included).
func TestHiddenAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	words := []string{"zebra", "lion", "okapi", "gnu"}
	convs := []string{"c1", "c2", "c3", "-"}
	for round := 0; round < 30; round++ {
		files := map[string]string{}
		for e := 1; e <= 3; e++ {
			for _, agent := range []string{"a", "b"} {
				var hist, notes strings.Builder
				for i := 0; i < 1+r.IntN(12); i++ {
					text := agent
					for j := 0; j < 1+r.IntN(4); j++ {
						text += " " + words[r.IntN(len(words))]
					}
					switch r.IntN(5) {
					case 0:
						fmt.Fprintf(&hist, "2026-10-21 18:00:%02d [s] %s\n", i, text)
					case 1:
						fmt.Fprintf(&notes, "%s\n", text)
					default:
						fmt.Fprintf(&hist, "2026-10-21 18:00:%02d [s] [%s] %s\n", i, convs[r.IntN(len(convs))], text)
					}
				}
				files[fmt.Sprintf("episode-%d/%s/%s.history", e, agent, agent)] = hist.String()
				files[fmt.Sprintf("episode-%d/%s/notes.md", e, agent)] = notes.String()
			}
		}
		ix := openTest(t, Options{Root: writeRun(t, files)})
		for i := 0; i < 20; i++ {
			req := randomRequest(r, words[r.IntN(len(words))]+" "+words[r.IntN(len(words))], []string{"a", "b"}, convs[:3], 4, 8)
			checkHidden(t, ix, req)
		}
		ix.Close()
	}
}

// TestHiddenEveryPath: the same on a generated run, every way of searching
// (pathTunings), the lifted ranking and the ranking with the rules on each.
func TestHiddenEveryPath(t *testing.T) {
	opts := rungen.Options{Bytes: 1 << 20, Seed: 5, Episodes: 3, Agents: 2}
	dir := t.TempDir()
	if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	queries := rungen.Queries(opts, 12)
	for _, tc := range pathTunings {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{Root: dir})
			ix.searcher.Tuning = tc.tune
			if _, err := ix.Refresh(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			info, err := ix.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, 5))
			noted := 0
			for _, q := range queries {
				for range 3 {
					ep := info.Episodes[r.IntN(len(info.Episodes))]
					convs := append(ep.Conversations, "nope")
					if checkHidden(t, ix, randomRequest(r, q, info.Agents, convs, len(info.Episodes)+1, 30)).Total() > 0 {
						noted++
					}
				}
			}
			if noted < len(queries) {
				t.Errorf("only %d of %d searches hid anything", noted, 3*len(queries))
			}
		})
	}
}

// randomRequest is a request for query with fields drawn at random: an
// episode of 1 to episodes (or none), a conversation of convs (or none), a
// scope, an agent of agents (or none), topK from 1 to maxK.
func randomRequest(r *rand.Rand, query string, agents, convs []string, episodes, maxK int) Request {
	req := Request{Query: query, TopK: 1 + r.IntN(maxK)}
	if r.IntN(4) > 0 {
		req.Episode = fmt.Sprintf("episode-%d", 1+r.IntN(episodes))
	}
	if r.IntN(4) > 0 {
		req.Conversation = convs[r.IntN(len(convs))]
	}
	if r.IntN(3) == 0 {
		req.Scope = "episode"
	}
	if r.IntN(4) == 0 {
		req.Agent = agents[r.IntN(len(agents))]
	}
	req.AllConversations = r.IntN(5) == 0
	return req
}

// checkHidden checks a search's hidden counts and items against brute force.
func checkHidden(t *testing.T, ix *Index, req Request) Hidden {
	t.Helper()
	res, err := ix.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := bruteHidden(t, ix, req, res); res.Hidden != want {
		t.Fatalf("%+v: hidden %+v, brute force %+v", req, res.Hidden, want)
	}
	if want := bruteFiltered(t, ix, req); !slices.Equal(texts(res.Items), texts(want)) {
		t.Fatalf("%+v: items %q, brute force %q", req, texts(res.Items), texts(want))
	}
	return res.Hidden
}

// TestNestedRankingEqualsTwoRankings: a request's two rankings made in one
// walk of the lists (rankAnswer: the lifted one and the request's own)
// give exactly what two plain rankings give — the lifted one, then the
// request's own with its rules — hit by hit (segment, piece, score to the
// last bit, order) and hidden count by hidden count, on a generated run,
// every way of searching, random requests at k 1, 5, 10 and 60, with and
// without a context, a scope, an agent.
func TestNestedRankingEqualsTwoRankings(t *testing.T) {
	opts := rungen.Options{Bytes: 1 << 20, Seed: 9, Episodes: 3, Agents: 2}
	dir := t.TempDir()
	if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	queries := append(rungen.Queries(opts, 16), "error", "the")
	ctx := context.Background()
	for _, tc := range pathTunings {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{Root: dir})
			ix.searcher.Tuning = tc.tune
			if _, err := ix.Refresh(ctx, nil); err != nil {
				t.Fatal(err)
			}
			info, err := ix.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(9, 9))
			differ := 0
			for _, q := range queries {
				for i, k := range []int{1, 5, 10, 60} {
					ep := info.Episodes[r.IntN(len(info.Episodes))]
					req := randomRequest(r, q, info.Agents, append(ep.Conversations, "nope"), len(info.Episodes)+1, 1)
					req.TopK = k
					if i%2 == 0 { // without a context: the rules reject every record file whole
						req.Episode, req.Conversation, req.Scope = "", "", ""
					}
					f := newFilter(&ix.state, ix.interpreter, req)
					text := req.rankingText()
					got, _, gotHidden, _, err := ix.rankAnswer(ctx, req, text, f)
					if err != nil {
						t.Fatal(err)
					}
					want, lifted, wantHidden := rankTwice(t, ix, req, text, f)
					if !slices.EqualFunc(got, want, sameHit) || gotHidden != wantHidden {
						t.Fatalf("%+v:\n one walk  %v hidden %+v\n two plain %v hidden %+v", req, briefHits(got), gotHidden, briefHits(want), wantHidden)
					}
					if !slices.EqualFunc(lifted, want, sameHit) {
						differ++
					}
				}
			}
			if differ < len(queries) {
				t.Errorf("the rules changed the ranking of only %d of %d requests", differ, 4*len(queries))
			}
		})
	}
}

// rankTwice is a request's ranking made plainly, as two searches: the
// lifted one, and the one with the request's rules (none under rule 1
// without a current episode); its hits, the lifted ones and hidden.
func rankTwice(t *testing.T, ix *Index, req Request, text string, f *filter) (hits, lifted []hit, hidden Hidden) {
	t.Helper()
	ctx := context.Background()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	q, err := newQuery(&ix.state, text, req.Agent)
	if err != nil {
		t.Fatal(err)
	}
	q.K = req.topK()
	if lifted, err = ix.run(ctx, q, liftedFilter(f)); err != nil {
		t.Fatal(err)
	}
	if !f.scopeEpisode || f.episode != "" {
		if hits, err = ix.run(ctx, q, f); err != nil {
			t.Fatal(err)
		}
	}
	return hits, lifted, hiddenOf(&ix.state, lifted, hits, f)
}

// sameHit reports whether two hits are one piece with one score, to the
// last bit.
func sameHit(a, b hit) bool {
	return a.seg == b.seg && a.doc == b.doc && a.tag == b.tag && math.Float64bits(a.score) == math.Float64bits(b.score)
}

// briefHits is hits as (file piece score).
func briefHits(hs []hit) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "(%d/%d %.6g) ", h.tag, h.doc, h.score)
	}
	return b.String()
}
