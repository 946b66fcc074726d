package retriever

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"runls/internal/rungen"
	"runls/masking"
	"runls/recordformat"
	"runls/retriever/internal/records"
)

// The fast merge of run/records against a brute force: every record file of
// the run read and parsed whole (recordformat.Parse, records grouped as
// bruteRecords groups them), filtered by the spec's words, and sorted by
// them: time as text with "," made ".", no time first, then path, then line.

// bruteListing lists the records req asks for (its cursor and limit aside)
// from the files as they are; masker nil: masking off.
func bruteListing(t testing.TB, root string, req RecordsRequest, masker masking.Masker) []Record {
	t.Helper()
	real, err := filepath.EvalSymlinks(root)
	must(t, err)
	wantEp, ok := EpisodeNumber(req.Episode)
	if !ok {
		t.Fatalf("brute force: episode %q", req.Episode)
	}
	minLevel := map[string]recordformat.Level{"": recordformat.None, "TRACE": recordformat.Trace, "DEBUG": recordformat.Debug,
		"INFO": recordformat.Info, "WARN": recordformat.Warn, "ERROR": recordformat.Error}[strings.ToUpper(req.MinLevel)]
	mask := func(s string) string {
		if masker == nil {
			return s
		}
		spans, _ := masker.Mask(s)
		out, _ := masking.Apply(s, spans)
		return out
	}
	type listed struct {
		Record
		order string // the time as text, "," made "."
	}
	var out []listed
	err = filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(real, path)
		must(t, err)
		rel = filepath.ToSlash(rel)
		parts := strings.Split(rel, "/")
		form := recordformat.FormOf(path)
		if len(parts) < 3 || !form.IsRecord() {
			return nil
		}
		if ep, ok := EpisodeNumber(parts[0]); !ok || ep != wantEp || req.Agent != "" && parts[1] != req.Agent {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if slices.Contains(data[:min(len(data), BinarySniffBytes)], 0) {
			return nil
		}
		recs, lines := bruteRecords(form, data)
		for _, br := range recs {
			head := lines[br.first]
			text := data[head.Start:head.TextEnd]
			var r listed
			r.Agent, r.Episode, r.Path, r.File = parts[1], parts[0], path, rel
			if head.Kind != recordformat.BeforeFirst {
				when := string(text[:recordformat.StampLen(text)])
				r.Time, r.order = &when, strings.ReplaceAll(when, ",", ".")
				r.key = recordformat.TimeKey(text)
				r.State = mask(recordformat.ValidText(data[head.StateStart:head.StateEnd]))
				if head.Level != recordformat.None {
					name := map[recordformat.Level]string{recordformat.Trace: "TRACE", recordformat.Debug: "DEBUG",
						recordformat.Info: "INFO", recordformat.Warn: "WARN", recordformat.Error: "ERROR"}[head.Level]
					r.Level = &name
				}
			} else {
				r.key = recordformat.NoTime
			}
			if head.Kind == recordformat.Fielded {
				c := mask(string(data[head.ConvStart:head.ConvEnd]))
				r.Conversation = &c
			}
			// Filters, in the spec's words.
			switch {
			case req.Conversation != "" && (head.Kind != recordformat.Fielded || string(data[head.ConvStart:head.ConvEnd]) != req.Conversation):
				continue
			case minLevel != recordformat.None && (head.Level == recordformat.None || head.Level < minLevel):
				continue
			case (req.From != "" || req.To != "") && r.Time == nil:
				continue
			case req.From != "" && (*r.Time)[:19] < req.From, req.To != "" && (*r.Time)[:19] > req.To:
				continue
			}
			var ev []string
			for i := br.first; i <= br.last; i++ {
				ev = append(ev, recordformat.ValidText(data[lines[i].Evidence:lines[i].TextEnd]))
			}
			r.Text = mask(strings.Join(ev, "\n"))
			last := lines[br.last]
			r.Location = Location{URI: FileURI(path), Range: Range{Start: Position{Line: br.first},
				End: Position{Line: br.last, Character: recordformat.UTF16Len(data[last.Start:last.TextEnd])}}}
			out = append(out, r)
		}
		return nil
	})
	must(t, err)
	slices.SortStableFunc(out, func(a, b listed) int {
		switch {
		case a.Time == nil && b.Time != nil:
			return -1
		case a.Time != nil && b.Time == nil:
			return 1
		}
		if c := strings.Compare(a.order, b.order); c != 0 {
			return c
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Location.Range.Start.Line - b.Location.Range.Start.Line
	})
	recs := make([]Record, len(out))
	for i, r := range out {
		recs[i] = r.Record
	}
	return recs
}

// full is a record as the differential tests compare it: every field.
func full(r Record) string {
	return fmt.Sprintf("%s %s %+v %v/%v %q %v %q", brief(r), r.Location.URI, r.Location.Range, r.Time != nil, r.Level != nil, r.State, r.Conversation != nil, r.Agent+" "+r.Episode)
}

func fulls(recs []Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, full(r))
	}
	return out
}

// randomTimedRecords writes n lines of a record file whose times repeat
// (few seconds, milliseconds with "," or "." or none) and, when back is
// set, sometimes go back; with lines of every kind, a line before the
// first record, CRLF, an unfinished last line, planted secrets and paths.
func randomTimedRecords(r *rand.Rand, n int, log, back bool) []byte {
	var sb strings.Builder
	if r.IntN(3) == 0 {
		sb.WriteString("--- opened ---\n\n")
	}
	sec := r.IntN(3)
	for i := 0; i < n; i++ {
		sec += r.IntN(2)
		if back && r.IntN(6) == 0 {
			sec = max(0, sec-r.IntN(4))
		}
		stamp := fmt.Sprintf("2026-10-21 18:00:%02d", sec%60)
		switch r.IntN(4) {
		case 0:
			stamp += fmt.Sprintf(",%03d", r.IntN(3)*250)
		case 1:
			stamp += fmt.Sprintf(".%03d", r.IntN(3)*250)
		}
		level := ""
		if log {
			level = []string{"INFO  ", "DEBUG ", "ERROR ", "WARN  ", "TRACE "}[r.IntN(5)]
		}
		conv := []string{"[conv-1] ", "[conv-2] ", "[-] ", "", "[conv-1] "}[r.IntN(5)]
		switch p := r.IntN(14); {
		case p < 8:
			fmt.Fprintf(&sb, "%s %s[running] %sA said: word %d", stamp, level, conv, i)
		case p < 9:
			fmt.Fprintf(&sb, "%s %s[st %d] %sA key ghp_0123456789abcdefghijABCDEFGHIJ01234%d at /home/a/x", stamp, level, i, conv, i%10)
		case p < 10:
			sb.WriteString("  indented ü " + fmt.Sprint(i))
		case p < 11:
			sb.WriteString("\tat com.example.X.y(X.java:" + fmt.Sprint(i) + ")")
		case p < 12:
			// empty line
		default:
			sb.WriteString("free text 😀 password=hunter2hunter2")
		}
		endRandomLine(&sb, r, i == n-1)
	}
	return []byte(sb.String())
}

func randomTimedRun(t testing.TB, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 19))
	files := map[string]string{}
	for ep := 1; ep <= 2; ep++ {
		for _, agent := range []string{"a", "b", "b-c", "c"} {
			base := fmt.Sprintf("episode-%d/%s/", ep, agent)
			files[base+agent+".history"] = string(randomTimedRecords(r, 5+r.IntN(60), false, r.IntN(3) == 0))
			files[base+agent+".log"] = string(randomTimedRecords(r, 5+r.IntN(60), true, r.IntN(3) == 0))
			if r.IntN(2) == 0 {
				files[base+"b/deep.log"] = string(randomTimedRecords(r, r.IntN(20), true, true))
			}
			files[base+"notes.txt"] = "2026-10-21 18:00:00 [running] [conv-1] a note\n"
		}
	}
	// Times that go back more often than a file is walked run by run.
	files["episode-1/c/many-runs.log"] = string(randomTimedRecords(r, 450, true, true))
	return writeRun(t, files)
}

// differentialRequests are the requests every generated run is asked.
func differentialRequests(episodes []string, agents []string) []RecordsRequest {
	var out []RecordsRequest
	for _, ep := range episodes {
		for _, conv := range []string{"", "conv-1", "-", "conv-2", "conv-9"} {
			out = append(out, RecordsRequest{Episode: ep, Conversation: conv})
			for _, ag := range agents {
				out = append(out, RecordsRequest{Episode: ep, Conversation: conv, Agent: ag})
			}
			out = append(out,
				RecordsRequest{Episode: ep, Conversation: conv, MinLevel: "WARN"},
				RecordsRequest{Episode: ep, Conversation: conv, MinLevel: "debug", From: "2026-10-21 18:00:03"},
				RecordsRequest{Episode: ep, Conversation: conv, To: "2026-10-21 18:00:05"},
				RecordsRequest{Episode: ep, Conversation: conv, From: "2026-10-21 18:00:04", To: "2026-10-21 18:00:04"},
			)
		}
	}
	return out
}

func TestRecordsAgainstBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		root := randomTimedRun(t, seed)
		var masker masking.Masker
		if seed%2 == 0 {
			masker = masking.HidingOutside(root)
		}
		ix := openTest(t, Options{Root: root, Masker: masker})
		r := rand.New(rand.NewPCG(seed, 7))
		for _, req := range differentialRequests([]string{"episode-1", "episode-2", "episode-3"}, []string{"b-c"}) {
			checkDifferential(t, ix, root, req, masker, 1+r.IntN(16))
		}
	}
}

// TestRecordsAgainstBruteForceGenerated: the same on a run of rungen (its
// stack traces, long lines, non-ASCII text, fielded and unfielded episodes).
func TestRecordsAgainstBruteForceGenerated(t *testing.T) {
	root := t.TempDir()
	if _, err := rungen.Generate(context.Background(), root, rungen.Options{Bytes: 2 << 20, Seed: 19, Episodes: 3, Agents: 3, Conversations: 3}); err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, Options{Root: root})
	for _, req := range []RecordsRequest{
		{Episode: "episode-1"}, {Episode: "episode-2", Conversation: "conv-1"}, {Episode: "episode-3", Conversation: "-"},
		{Episode: "episode-2", Agent: "bob", MinLevel: "INFO"}, {Episode: "episode-3", Conversation: "conv-2", MinLevel: "ERROR"},
		{Episode: "episode-2", From: "2026-01-02 00:05:00", To: "2026-01-02 00:20:00"},
	} {
		checkDifferential(t, ix, root, req, nil, 997)
	}
}

func checkDifferential(t *testing.T, ix *Index, root string, req RecordsRequest, masker masking.Masker, limit int) {
	t.Helper()
	want := fulls(bruteListing(t, root, req, masker))
	req.Limit = MaxRecordsLimit
	whole := mustRecords(t, ix, req)
	if got := fulls(whole.Records); !slices.Equal(got, want) {
		t.Fatalf("%s %+v:\n got  %d records\n want %d\n%s", root, req, len(got), len(want), firstDifference(got, want))
	}
	req.Limit = limit
	pages, _ := allPages(t, ix, req)
	if got := fulls(pages); !slices.Equal(got, want) {
		t.Fatalf("%+v in pages of %d:\n%s", req, limit, firstDifference(got, want))
	}
}

func firstDifference(got, want []string) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf(" at %d:\n got  %s\n want %s", i, g, w)
		}
	}
	return " (equal)"
}

// TestTimeRunsOfGeneratedFiles: the random runs' files take both ways of
// walking a file whose times go back (so the brute force sees both).
func TestTimeRunsOfGeneratedFiles(t *testing.T) {
	root := randomTimedRun(t, 1)
	ix := openTest(t, Options{Root: root})
	_, err := ix.Refresh(context.Background(), nil)
	must(t, err)
	few, many := 0, 0
	for _, fs := range ix.state.Files {
		switch n := len(fs.Records().TimeRuns()) - 1; {
		case n > records.MaxTimeRuns:
			many++
		case n > 1:
			few++
		}
	}
	if few == 0 || many == 0 {
		t.Errorf("%d files of a few runs, %d of many: want some of each", few, many)
	}
}
