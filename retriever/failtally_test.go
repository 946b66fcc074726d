package retriever

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"runls/recordformat"
	"runls/retriever/internal/records"
	"runls/retriever/internal/runfs"
)

// bruteFailures groups the files' failures at level floor or above the
// plain way (every group whole, then sorted and cut): the reference the
// kept tally and freshFailures are held to.
func bruteFailures(root string, files []fileFailures, floor recordformat.Level) FailuresResult {
	type rec struct {
		key  int64
		rel  string
		path string
		e    failEntry
	}
	type group struct {
		pattern          string
		recs             []rec
		agents, episodes map[string]bool
	}
	groups := map[string]*group{}
	for _, f := range files {
		for _, e := range slices.Concat(f.kept, f.last) {
			if !e.exception && (e.level == recordformat.None || e.level < floor) {
				continue
			}
			g := groups[e.pattern]
			if g == nil {
				g = &group{pattern: e.pattern, agents: map[string]bool{}, episodes: map[string]bool{}}
				groups[e.pattern] = g
			}
			g.recs = append(g.recs, rec{e.key, f.fs.Rel, runfs.Abs(root, f.fs.Rel), e})
			g.agents[f.agent] = true
			g.episodes[f.fs.Episode()] = true
		}
	}
	recCmp := func(x, y rec) int {
		return cmp.Or(cmp.Compare(x.key, y.key), strings.Compare(x.rel, y.rel), cmp.Compare(x.e.rng.Start.Line, y.e.rng.Start.Line))
	}
	firstKey := func(g *group) int64 {
		for _, r := range g.recs {
			if r.e.timed {
				return r.key
			}
		}
		return recordformat.NoTime
	}
	var gs []*group
	for _, g := range groups {
		slices.SortFunc(g.recs, recCmp)
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(x, y *group) int {
		return cmp.Or(cmp.Compare(len(y.recs), len(x.recs)), cmp.Compare(firstKey(x), firstKey(y)), strings.Compare(x.pattern, y.pattern))
	})
	gs = gs[:min(len(gs), MaxFailureGroups)]
	res := FailuresResult{Groups: []FailureGroup{}}
	for _, g := range gs {
		out := FailureGroup{Pattern: g.pattern, Count: len(g.recs), Agents: slices.Sorted(mapKeys(g.agents)), Episodes: sortedEpisodes(g.episodes),
			Records: []Location{}, Paths: []string{}}
		for _, r := range g.recs {
			if !r.e.timed {
				continue
			}
			when := records.FormatTimeKey(r.key, r.e.dotMillis)
			if out.First == nil {
				out.First = &when
			}
			out.Last = &when
		}
		for _, r := range g.recs[:min(len(g.recs), MaxFailureRecords)] {
			out.Records = append(out.Records, Location{URI: FileURI(r.path), Range: r.e.rng})
			out.Paths = append(out.Paths, r.path)
		}
		res.Groups = append(res.Groups, out)
	}
	return res
}

// foundNow is what the files give the default request now.
func foundNow(t *testing.T, ix *Index, q failuresQuery) []fileFailures {
	t.Helper()
	files, agents := ix.failureFiles(q)
	var out []fileFailures
	for i, fs := range files {
		parts, err := ix.rb.fileFailures(context.Background(), fs, q.minLevel)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			p.agent = agents[i]
			out = append(out, p)
		}
	}
	return out
}

// TestFailuresTally: the kept tally, followed through appends (new
// failures, old groups growing, a last record growing a stack trace, a
// record that becomes a failure only when its trace arrives), a rewrite and
// a deletion, answers what freshFailures and the brute force answer from
// the same failures; and a fresh index answers the same. More than
// MaxFailureGroups groups and groups of more than MaxFailureRecords
// failures, so that groups enter and leave the best.
func TestFailuresTally(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	files := []string{"episode-1/alice/alice.log", "episode-1/bob/bob.log", "episode-2/alice/alice.log", "episode-10/carol/carol.log", "episode-2/carol/carol.history"}
	run := map[string]string{}
	for _, f := range files {
		run[f] = "2026-10-21 18:00:00 INFO  [running] [conv-1] X started\n"
	}
	// Lines before a file's first record: failures without a time.
	run["episode-3/dave/dave.log"] = "java.lang.Error: before 1\njava.lang.Error: before 2\n2026-10-21 18:00:00 INFO  [running] [conv-1] X started\n"
	run["episode-3/erin/erin.log"] = "java.lang.Error: before 1\n"
	root := writeRun(t, run)
	ix := openTest(t, Options{Root: root})
	words := func(n int) string {
		return fmt.Sprintf("failure kind %s", strings.Repeat(string(rune('a'+n%26)), 1+n/26))
	}
	sec := 0
	line := func(file, level, text string) string {
		sec += rng.IntN(2) // times tie, within a file and across files
		stamp := fmt.Sprintf("2026-10-21 %02d:%02d:%02d", 18+sec/3600, sec/60%60, sec%60)
		if rng.IntN(3) == 0 {
			stamp += ",500"
		}
		if strings.HasSuffix(file, ".history") {
			return fmt.Sprintf("%s [running] [conv-1] X %s\n", stamp, text)
		}
		return fmt.Sprintf("%s %-5s [running] [conv-1] X %s\n", stamp, level, text)
	}
	check := func(step string) {
		t.Helper()
		for _, floor := range []recordformat.Level{recordformat.Error, recordformat.Warn} {
			req := FailuresRequest{MinLevel: floor.String()}
			got := failuresOf(t, ix, req)
			found := foundNow(t, ix, failuresQuery{minLevel: floor})
			fresh := freshFailures(ix.root, found, floor, "")
			brute := bruteFailures(ix.root, found, floor)
			if !reflect.DeepEqual(got.Groups, fresh.Groups) {
				t.Fatalf("%s, %s: kept tally\n%v\nfresh\n%v", step, floor, summaries(got), summaries(fresh))
			}
			if !reflect.DeepEqual(got.Groups, brute.Groups) {
				t.Fatalf("%s, %s: kept tally\n%v\nbrute force\n%v", step, floor, summaries(got), summaries(brute))
			}
			// A fresh index, and below the memos (read for the request).
			other := failuresOf(t, openTest(t, Options{Root: root}), req)
			if !reflect.DeepEqual(got.Groups, other.Groups) {
				t.Fatalf("%s, %s: followed\n%v\nfresh index\n%v", step, floor, summaries(got), summaries(other))
			}
			if kept, made := got.EncodedJSON(), (&FailuresResult{Groups: brute.Groups}).EncodedJSON(); string(kept) != string(made) {
				t.Fatalf("%s, %s: the JSON kept is not the answer's", step, floor)
			}
		}
		// Below WARN nothing is kept: the answer is read for the request.
		info := failuresOf(t, ix, FailuresRequest{MinLevel: "INFO"})
		brute := bruteFailures(ix.root, foundNow(t, ix, failuresQuery{minLevel: recordformat.Info}), recordformat.Info)
		if !reflect.DeepEqual(info.Groups, brute.Groups) {
			t.Fatalf("%s, INFO: answered\n%v\nbrute force\n%v", step, summaries(info), summaries(brute))
		}
	}
	check("start")
	for step := range 60 {
		for range 1 + rng.IntN(50) {
			f := files[rng.IntN(len(files))]
			var b strings.Builder
			switch k := rng.IntN(10); {
			case k < 5: // one of many rare kinds: more than MaxFailureGroups groups
				b.WriteString(line(f, "ERROR", words(rng.IntN(520))+fmt.Sprintf(" after %d tries", rng.IntN(9))))
			case k < 7: // a common one: more than MaxFailureRecords failures
				b.WriteString(line(f, "ERROR", fmt.Sprintf("tool call %d failed", rng.IntN(1000))))
			case k < 8: // a stack trace on the last record (maybe an INFO, maybe one being appended)
				b.WriteString("java.lang.IllegalStateException: state " + fmt.Sprint(rng.IntN(5)) + "\n\tat A.b(A.java:1)\n")
			case k < 9:
				b.WriteString(line(f, "INFO", "all is fine"))
			default:
				b.WriteString(line(f, "WARN", "slow"))
			}
			appendFile(t, root, f, b.String())
		}
		check(fmt.Sprintf("step %d", step))
		switch step {
		case 25:
			writeFile(t, root, files[1], line(files[1], "ERROR", "rewritten "+words(3)))
			check("rewrite")
		case 32:
			if err := removeFile(root, files[3]); err != nil {
				t.Fatal(err)
			}
			files = files[:3:3]
			check("deletion")
		}
	}
	if got := failuresOf(t, ix, FailuresRequest{}); len(got.Groups) != MaxFailureGroups || got.Groups[0].Count <= MaxFailureRecords {
		t.Errorf("%d groups, the first of %d: want %d groups and more than %d in the first", len(got.Groups), got.Groups[0].Count, MaxFailureGroups, MaxFailureRecords)
	}
}

func summaries(r FailuresResult) string {
	var b strings.Builder
	for _, g := range r.Groups {
		b.WriteString(summary(g))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestFailuresAfterAppend: an answer kept (asked twice) is not given again
// once a record is appended: the new failure is in the next answer, its
// location the appended line's.
func TestFailuresAfterAppend(t *testing.T) {
	root := writeRun(t, failuresRun)
	ix := openTest(t, Options{Root: root})
	before := failuresOf(t, ix, FailuresRequest{})
	if again := failuresOf(t, ix, FailuresRequest{}); !reflect.DeepEqual(before.Groups, again.Groups) {
		t.Fatal("asked twice without a change: two answers")
	}
	appendFile(t, root, "episode-2/bob/bob.log", "2026-10-22 09:00:09 ERROR [running] [conv-1] Bob a brand new failure 7\n")
	after := failuresOf(t, ix, FailuresRequest{})
	var found bool
	for _, g := range after.Groups {
		if g.Pattern == "a brand new failure <n>" {
			found = true
			if g.Count != 1 || len(g.Records) != 1 || g.Records[0].Range.Start.Line != 3 || !strings.HasSuffix(g.Records[0].URI, "/episode-2/bob/bob.log") {
				t.Errorf("the new group: %s", summary(g))
			}
		}
	}
	if !found || len(after.Groups) != len(before.Groups)+1 {
		t.Errorf("after the append\n%swant the new failure's group beside\n%s", summaries(after), summaries(before))
	}
	if !strings.Contains(string(after.EncodedJSON()), "a brand new failure") {
		t.Error("the answer's JSON is the one kept from before the append")
	}
}

// TestFailuresJSON: the answer's JSON, written by appending, is
// encoding/json's, byte for byte.
func TestFailuresJSON(t *testing.T) {
	first, last := "2026-10-21 18:00:01", "2026-10-21 18:00:05,250"
	tricky := []string{"", "plain", `quote " and \ back`, "<n> & <str>", "tab\tnl\nret\rbs\bff\f", "\x00\x01\x1f\x7f",
		"bad \xff utf-8 \xc3", "line sep \u2028 par \u2029", "é ñ 日本 😀", "file:///tmp/a%20b/episode-1/x&y.log"}
	var groups []FailureGroup
	for i, s := range tricky {
		g := FailureGroup{Pattern: s, Count: i, Agents: []string{s, "alice"}, Episodes: []string{"episode-1"},
			Records: []Location{{URI: s, Range: Range{Start: Position{i, 2 * i}, End: Position{i + 1, 0}}}}}
		if i%2 == 0 {
			g.First, g.Last = &first, &last
		}
		groups = append(groups, g)
	}
	groups = append(groups, FailureGroup{Pattern: "nil lists"})
	for _, gs := range [][]FailureGroup{nil, {}, groups} {
		want, err := json.Marshal(struct {
			Groups []FailureGroup `json:"groups"`
		}{gs})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFailures(nil, gs); string(got) != string(want) {
			t.Errorf("appended\n%s\nencoding/json\n%s", got, want)
		}
	}
}

func FuzzFailuresJSONString(f *testing.F) {
	for _, s := range []string{"a<b>&c", "\u2028\xff\x00", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: appended %s, encoding/json %s", s, got, want)
		}
	})
}

// TestFailuresFirstEvidence: without a masker a failure's pattern is made
// from its first line's evidence alone; it is the first line of the whole
// record's evidence, on every record of the sample run and of a run of
// JSON lines, foreign layouts and stack traces.
func TestFailuresFirstEvidence(t *testing.T) {
	sample, err := filepath.Abs(filepath.Join("..", "testdata", "sample-run"))
	if err != nil {
		t.Fatal(err)
	}
	other := writeRun(t, map[string]string{
		"episode-1/a/a.log":   "2026-10-21 18:00:00 ERROR [running] [conv-1] A boom\n" + stackTail + "  indented\n",
		"episode-1/a/b.jsonl": `{"time":"2026-10-21T18:00:00Z","level":"error","message":"line one\nline two"}` + "\n",
		"episode-1/a/c.log":   "2026-10-21 18:00:00,123 ERROR com.example.Main - started\n\tat x.y(Z.java:1)\n",
		"episode-1/a/d.log":   "java.lang.Error: before any record\n2026-10-21 18:00:00 INFO  [running] [-] A fine\n",
		"episode-1/a/e.log": `{"time":"2026-10-21T18:00:00Z","level":"ERROR","msg":"x","content":"one\ntwo"}` + "\n" +
			`{"time":"2026-10-21T18:00:01Z","level":"INFO","text":"three"}` + "\njava.lang.Error: after it\n",
	})
	records, json := 0, 0
	for _, root := range []string{sample, other} {
		ix := openTest(t, Options{Root: root})
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, fs := range foundNow(t, ix, failuresQuery{minLevel: recordformat.Trace}) {
			n := fs.fs.Records().Len()
			if n == 0 {
				continue
			}
			rt, err := ix.rb.readRecords(context.Background(), fs.fs, 0, n)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				r, err := rt.record(i)
				if err != nil {
					t.Fatal(err)
				}
				whole, _, _ := strings.Cut(r.evidence(), "\n")
				first, _, _ := strings.Cut(r.firstEvidence(), "\n")
				if whole != first {
					t.Errorf("%s record %d: first line of the evidence %q, of the first line's %q", fs.fs.Rel, i, whole, first)
				}
				records++
				if r.head.JSON {
					json++
				}
			}
		}
	}
	if records < 20 || json == 0 {
		t.Errorf("%d records compared, %d JSON lines: the comparison says little", records, json)
	}
}
