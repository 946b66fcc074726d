package retriever

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"runls/internal/rungen"
	"runls/masking"
	"runls/recordformat"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/records"
)

// The record table is checked against a brute force: the whole file parsed
// at once (recordformat.Parse), records grouped by the rules of spec §2, and
// the diagnostics and folds of §9 and §11 made from that, for files read
// whole and for files that grow a few bytes at a time (so records complete
// across reads, and lines arrive in parts).

type bruteRecord struct {
	first, last int    // lines
	kind        int    // records.KindFielded, ...
	conv        string // as written; "" unfielded
	spanFirst   int    // first unindented continuation line, -1: none
	spanLast    int
	spanCount   int
}

func bruteRecords(form recordformat.Form, data []byte) ([]bruteRecord, []recordformat.Line) {
	lines := recordformat.Parse(form, data)
	var recs []bruteRecord
	for i, l := range lines {
		switch {
		case l.Kind == recordformat.Fielded:
			recs = append(recs, bruteRecord{first: i, kind: records.KindFielded, conv: string(data[l.ConvStart:l.ConvEnd]), spanFirst: -1})
		case l.Kind == recordformat.Unfielded:
			recs = append(recs, bruteRecord{first: i, kind: records.KindUnfielded, spanFirst: -1})
		case l.Kind == recordformat.BeforeFirst && !l.Empty():
			recs = append(recs, bruteRecord{first: i, kind: records.KindBeforeFirst, spanFirst: -1})
		case len(recs) == 0:
			continue // an empty line before the first record: in none
		}
		r := &recs[len(recs)-1]
		r.last = i
		if l.Kind == recordformat.Unindented && !l.Empty() {
			if r.spanFirst < 0 {
				r.spanFirst = i
			}
			r.spanLast = i
			r.spanCount++
		}
	}
	return recs, lines
}

func bruteDiagnostics(form recordformat.Form, data []byte, episode string, max int) []Diagnostic {
	recs, lines := bruteRecords(form, data)
	units := func(i int) int { return recordformat.UTF16Len(data[lines[i].Start:lines[i].TextEnd]) }
	fielded := slices.ContainsFunc(recs, func(r bruteRecord) bool { return r.kind == records.KindFielded })
	var out []Diagnostic
	for a := 0; a < len(recs); {
		if recs[a].kind == records.KindFielded {
			a++
			continue
		}
		b := a
		for b+1 < len(recs) && recs[b+1].kind != records.KindFielded {
			b++
		}
		d := Diagnostic{Range: Range{Start: Position{Line: recs[a].first}, End: Position{Line: recs[b].last, Character: units(recs[b].last)}},
			Severity: SeverityWarning, Code: CodeUnfieldedLine, Message: unfieldedMessage(b-a+1, episode)}
		if !fielded {
			d.Severity, d.Message = SeverityInformation, predatesMessage(b-a+1, episode)
		}
		out = append(out, d)
		a = b + 1
	}
	var hints []Diagnostic
	for _, r := range recs {
		if r.spanCount == 0 {
			continue
		}
		rng := Range{Start: Position{Line: r.spanFirst}, End: Position{Line: r.spanLast, Character: units(r.spanLast)}}
		// A stack trace (every unindented line a stack-trace line) is a Hint
		// naming its first exception line, outside the cap.
		trace, exception := true, ""
		for i := r.spanFirst; i <= r.spanLast; i++ {
			l := data[lines[i].Start:lines[i].TextEnd]
			if len(l) == 0 || bytes.HasPrefix(l, []byte("  ")) {
				continue
			}
			trace = trace && recordformat.IsStackTraceLine(l)
			if _, ok := recordformat.ThrownName(l); ok && exception == "" {
				exception = exceptionText(l)
			}
		}
		if trace {
			hints = append(hints, Diagnostic{Range: rng, Severity: SeverityHint, Code: CodeUnindentedContinuation,
				Message: stackTraceMessage(exception, r.spanCount)})
			continue
		}
		out = append(out, Diagnostic{Range: rng, Severity: SeverityWarning, Code: CodeUnindentedContinuation, Message: unindentedMessage(r.spanCount)})
	}
	slices.SortStableFunc(out, func(x, y Diagnostic) int { return cmp.Compare(x.Range.Start.Line, y.Range.Start.Line) })
	if max != Uncapped && len(out) > max {
		more := Diagnostic{Range: Range{Start: out[max-1].Range.Start, End: out[max-1].Range.Start}, Severity: SeverityWarning,
			Code: CodeMore, Message: moreMessage(len(out) - max + 1)}
		out = append(out[:max-1], more)
	}
	out = append(out, hints...)
	slices.SortStableFunc(out, func(x, y Diagnostic) int { return cmp.Compare(x.Range.Start.Line, y.Range.Start.Line) })
	return out
}

func bruteFolds(form recordformat.Form, data []byte) []Fold {
	recs, _ := bruteRecords(form, data)
	var out []Fold
	for a := 0; a < len(recs); {
		b := a
		for b+1 < len(recs) && recs[b+1].conv == recs[a].conv && (recs[b+1].kind == records.KindFielded) == (recs[a].kind == records.KindFielded) {
			b++
		}
		if b > a {
			out = append(out, Fold{StartLine: recs[a].first, EndLine: recs[b].last})
		}
		a = b + 1
	}
	for _, r := range recs {
		if r.last > r.first {
			out = append(out, Fold{StartLine: r.first, EndLine: r.last})
		}
	}
	slices.SortStableFunc(out, func(x, y Fold) int {
		return cmp.Or(cmp.Compare(x.StartLine, y.StartLine), cmp.Compare(y.EndLine, x.EndLine))
	})
	return out
}

// recordFixtures are record files shaped as the spec's cases: several stack
// traces, interleaved conversations, a file written before 0.18.6, lines
// before the first record, a continuation of indented and unindented lines.
var recordFixtures = []struct {
	name, file, text string
}{
	{"stack-traces", "episode-2/bob/bob.log", "" +
		"2026-10-21 18:00:10.050 INFO  [running] [-] Bob chat started\n" +
		"2026-10-21 18:01:02.310 ERROR [running] [conv-1] Bob migration dry-run failed\n" +
		"java.lang.IllegalStateException: column \"currency\" already exists\n" +
		"\tat com.example.billing.Migrator.apply(Migrator.java:88)\n" +
		"\tat com.example.billing.Main.main(Main.java:17)\n" +
		"2026-10-21 18:05:59.900 WARN  [running] [conv-1] Bob retrying with IF NOT EXISTS\n" +
		"java.util.concurrent.TimeoutException: lock wait\n" +
		"\tat com.example.billing.Lock.wait(Lock.java:12)\n" +
		"Caused by: java.net.SocketTimeoutException: Read timed out\n" +
		"\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)\n" +
		"\t... 3 more\n" +
		"2026-10-21 18:06:01.000 DEBUG [running] [conv-1] Bob migration passed\n" +
		"2026-10-21 18:15:00.010 INFO  [finished] [-] Bob chat stopped\n"},
	{"interleaved", "episode-2/alice/alice.history", "" +
		"2026-10-21 18:00:00 [running] [conv-1] Alice was told: deploy the billing service\n" +
		"2026-10-21 18:00:02,500 [running] [conv-1] Alice said: on it\n" +
		"  first I check the migration\n" +
		"2026-10-21 18:00:03 [running] [conv-2] Alice said: the hotel is booked\n" +
		"2026-10-21 18:00:09 [running] [conv-1] Alice said: migration passed\n" +
		"2026-10-21 18:01:00 [running] [-] Alice has a break\n" +
		"\n" +
		"2026-10-21 18:02:00 [running] [conv-2] Alice said: flights too 😀 ✈\n" +
		"  window seat\n" +
		"\n" +
		"2026-10-21 18:03:00 [running] [conv-2] Alice said: done\n"},
	{"pre-0.18.6", "episode-1/carol/carol.history", "" +
		"2026-10-20 09:00:00 [running] Carol has started episode 1.\n" +
		"2026-10-20 09:00:05 [running] Carol was told: compare the hotels\n" +
		"  by price\n" +
		"2026-10-20 09:01:10 [running] Carol said: three hotels\n" +
		"stray line without indent\n" +
		"2026-10-20 09:30:00 [finished] Carol has finished episode 1.\n"},
	{"before-first", "episode-3/dave/dave.log", "" +
		"\n" +
		"--- log opened for dave ---\n" +
		"  an indented line before any record\n" +
		"\n" +
		"2026-10-22 10:00:00.000 INFO  [running] [-] Dave chat started\n" +
		"2026-10-22 10:00:01.000 INFO  [running] Dave an unfielded line among fielded ones\n" +
		"2026-10-22 10:00:02.000 INFO  [running] Dave another\n" +
		"2026-10-22 10:00:03.000 INFO  [running] [conv-9] Dave back to the field\n"},
	{"mixed-continuation", "episode-3/erin/erin.log", "" +
		"2026-10-22 11:00:00.000 ERROR [running] [conv-4] Erin the tool failed\n" +
		"  the request was:\n" +
		"com.example.ToolFailedException: exit 3\n" +
		"  indented again\n" +
		"\tat com.example.Tool.run(Tool.java:9)\n" +
		"\n" +
		"  trailing indented line\n" +
		"2026-10-22 11:00:05.000 INFO  [running] [conv-4] Erin retried\r\n" +
		"2026-10-22 11:00:06.000 INFO  [running] [conv-4] Erin ok without a line end"},
}

func TestRecordTableAgainstBruteForce(t *testing.T) {
	for _, fx := range recordFixtures {
		t.Run(fx.name, func(t *testing.T) {
			checkAgainstBrute(t, fx.file, []byte(fx.text), 5)
			checkAgainstBrute(t, fx.file, []byte(fx.text), 17)
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		form := []string{"episode-1/a/a.log", "episode-1/a/a.history"}[i%2]
		data := randomRecords(r, 40+r.IntN(80))
		t.Run(fmt.Sprintf("random-%d", i), func(t *testing.T) {
			checkAgainstBrute(t, form, data, 20+r.IntN(300))
		})
	}
}

// checkAgainstBrute writes data to a file of a new run step bytes at a time,
// refreshing after each, and compares the index's diagnostics and folds with
// the brute force on the file's content so far; the whole file's also with a
// fresh index.
func checkAgainstBrute(t *testing.T, rel string, data []byte, step int) {
	t.Helper()
	root := writeRun(t, map[string]string{rel: ""})
	path := filepath.Join(root, filepath.FromSlash(rel))
	ix := openTest(t, Options{Root: root})
	form := recordformat.FormOf(rel)
	episode := strings.Split(rel, "/")[0]
	for n := min(step, len(data)); ; n = min(n+step, len(data)) {
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		// The same size twice in a row is read anew: a write that did not
		// grow the file must not keep the old bytes.
		if _, err := ix.Refresh(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		compareWithBrute(t, ix, path, form, data[:n], episode)
		if n == len(data) {
			break
		}
	}
	fresh := openTest(t, Options{Root: root})
	if _, err := fresh.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	compareWithBrute(t, fresh, path, form, data, episode)
}

// compareWithFresh compares what ix holds of the file at path (data) with
// what an index reading data afresh holds: its diagnostics and folds.
func compareWithFresh(t *testing.T, ix *Index, path string, data []byte) {
	t.Helper()
	rel, err := filepath.Rel(ix.Root(), path)
	if err != nil {
		t.Fatal(err)
	}
	root := writeRun(t, map[string]string{filepath.ToSlash(rel): string(data)})
	fresh := openTest(t, Options{Root: root})
	if _, err := fresh.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, rel)
	if got, want := ix.Diagnostics(path, Uncapped), fresh.Diagnostics(other, Uncapped); !reflect.DeepEqual(got, want) {
		t.Fatalf("after %d bytes: diagnostics\n%s\nwant a fresh read's\n%s\nof\n%q", len(data), dump(got), dump(want), data)
	}
	if got, want := ix.Folds(path), fresh.Folds(other); !reflect.DeepEqual(got, want) {
		t.Fatalf("after %d bytes: folds %+v, want a fresh read's %+v", len(data), got, want)
	}
}

func compareWithBrute(t *testing.T, ix *Index, path string, form recordformat.Form, data []byte, episode string) {
	t.Helper()
	if bytes.IndexByte(data[:min(len(data), BinarySniffBytes)], 0) >= 0 {
		// A binary file is left out: it has no records.
		if ds, fs := ix.Diagnostics(path, Uncapped), ix.Folds(path); len(ds)+len(fs) != 0 {
			t.Fatalf("a binary file has %d diagnostics, %d folds", len(ds), len(fs))
		}
		return
	}
	if layout, ok := recordformat.Detect(form, data); ok && layout.Foreign() {
		// The brute force reads the run's own forms only: a foreign log is
		// compared with a fresh read of the same bytes.
		compareWithFresh(t, ix, path, data)
		return
	}
	for _, max := range []int{Uncapped, 200, 2, 1} {
		got, want := ix.Diagnostics(path, max), bruteDiagnostics(form, data, episode, max)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d bytes, cap %d: diagnostics\n%s\nwant\n%s\nof\n%q", len(data), max, dump(got), dump(want), data)
		}
	}
	got, want := ix.Folds(path), bruteFolds(form, data)
	if len(got) != 0 || len(want) != 0 {
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d bytes: folds %v, want %v of\n%q", len(data), got, want, data)
		}
	}
	// The outline's runs and records have the brute force's lines.
	out, err := ix.Outline(context.Background(), path, 0)
	if err != nil {
		t.Fatalf("outline after %d bytes: %v", len(data), err)
	}
	recs, lines := bruteRecords(form, data)
	k := 0
	for _, run := range out.Runs {
		for _, r := range run.Records {
			if k >= len(recs) {
				t.Fatalf("outline has more records than %d", len(recs))
			}
			b := recs[k]
			last := lines[b.last]
			if r.Range.Start.Line != b.first || r.Range.End.Line != b.last || r.Range.End.Character != recordformat.UTF16Len(data[last.Start:last.TextEnd]) {
				t.Fatalf("after %d bytes: outline record %d at %+v, want lines %d-%d", len(data), k, r.Range, b.first, b.last)
			}
			k++
		}
	}
	if k != len(recs) {
		t.Fatalf("after %d bytes: outline lists %d records, want %d", len(data), k, len(recs))
	}
	// Every line of a record is found in it, and its time is its first line's.
	tab := ix.recordFile(path).Records()
	for k, b := range recs {
		want := recordformat.TimeKey(data[lines[b.first].Start:lines[b.first].TextEnd])
		if b.kind == records.KindBeforeFirst {
			want = recordformat.NoTime
		}
		if got := tab.Time(k); got != want {
			t.Fatalf("record %d: time %d, want %d", k, got, want)
		}
		for n := b.first; n <= b.last; n += max(1, (b.last-b.first)/3) {
			if i := tab.RecordAt(uint32(n)); i != k {
				t.Fatalf("line %d is in record %d, want %d", n, i, k)
			}
		}
	}
}

func dump(ds []Diagnostic) string {
	var sb strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&sb, "  %d:%d-%d:%d %d %s %q\n", d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Line, d.Range.End.Character, d.Severity, d.Code, d.Message)
	}
	return sb.String()
}

// randomRecords writes n lines of every kind a record file meets.
func randomRecords(r *rand.Rand, n int) []byte {
	var sb strings.Builder
	sec := 0
	for i := 0; i < n; i++ {
		sec += r.IntN(3)
		stamp := fmt.Sprintf("2026-10-21 18:%02d:%02d", sec/60%60, sec%60)
		if r.IntN(3) == 0 {
			stamp += fmt.Sprintf(",%03d", r.IntN(1000))
		}
		level := []string{"INFO ", "DEBUG", "ERROR", "WARN ", "TRACE"}[r.IntN(5)]
		switch p := r.IntN(20); {
		case p < 6:
			fmt.Fprintf(&sb, "%s %s [running] [conv-%d] A said: word %d", stamp, level, r.IntN(3), i)
		case p < 8:
			fmt.Fprintf(&sb, "%s %s [running] A unfielded %d", stamp, level, i)
		case p < 9:
			fmt.Fprintf(&sb, "%s [running] [-] A history form %d", stamp, i)
		case p < 10:
			fmt.Fprintf(&sb, "%s [running] A history unfielded %d", stamp, i)
		case p < 13:
			sb.WriteString("  indented ü " + fmt.Sprint(i))
		case p < 16:
			sb.WriteString("\tat com.example.X.y(X.java:" + fmt.Sprint(i) + ")")
		case p < 18:
			// empty line
		case p < 19:
			sb.WriteString("free text 😀")
		default:
			sb.WriteString(" ")
		}
		endRandomLine(&sb, r, i == n-1)
	}
	return []byte(sb.String())
}

// endRandomLine ends a line of a random record file: "\r" one time in ten
// (CRLF, or a "\r" that is text on an unended last line), and no line end
// one time in two after the last line.
func endRandomLine(sb *strings.Builder, r *rand.Rand, last bool) {
	if r.IntN(10) == 0 {
		sb.WriteString("\r")
	}
	if !last || r.IntN(2) == 0 {
		sb.WriteString("\n")
	}
}

// FuzzRecordTable: for any content, read in two parts, the diagnostics and
// folds are the brute force's.
func FuzzRecordTable(f *testing.F) {
	for _, fx := range recordFixtures {
		f.Add([]byte(fx.text), uint16(len(fx.text)/2), strings.HasSuffix(fx.file, ".log"))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16, log bool) {
		rel := "episode-1/a/a.history"
		if log {
			rel = "episode-1/a/a.log"
		}
		if len(data) > 1<<12 {
			return
		}
		// At most three reads, so that the fuzzer runs many inputs.
		checkAgainstBrute(t, rel, data, max(1, int(split)%(len(data)+1), len(data)/3))
	})
}

// TestDiagnosticsCap: a file with more diagnostics than the cap gets cap-1
// and one saying how many more, at the start of the first left out.
func TestDiagnosticsCap(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&sb, "2026-10-21 18:00:%02d.000 ERROR [running] [conv-1] A failed %d\nwritten without the indent %d\n", i, i, i)
	}
	root := writeRun(t, map[string]string{"episode-1/a/a.log": sb.String()})
	ix := openTest(t, Options{Root: root, MaxDiagnosticsPerFile: 4})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "episode-1/a/a.log")
	ds := ix.Diagnostics(path, 0)
	if len(ds) != 4 || ds[3].Code != CodeMore || ds[3].Range.Start.Line != 7 || !strings.HasPrefix(ds[3].Message, "7 more format warnings") {
		t.Fatalf("capped at 4:\n%s", dump(ds))
	}
	if n := len(ix.Diagnostics(path, Uncapped)); n != 10 {
		t.Errorf("uncapped: %d diagnostics, want 10 (one per stack trace)", n)
	}
	// The caller's cap is the cap (the editors' setting), above the index's
	// default too.
	if n := len(ix.Diagnostics(path, 100)); n != 10 {
		t.Errorf("a cap above the index's: %d diagnostics, want all 10", n)
	}
	if ds := ix.Diagnostics(path, 3, CodeMore); len(ds) != 3 || ds[2].Code == CodeMore {
		t.Errorf("more-warnings left out: want the first 3:\n%s", dump(ds))
	}
	if ds := ix.Diagnostics(path, 0, CodeUnindentedContinuation); len(ds) != 0 {
		t.Errorf("its only code left out:\n%s", dump(ds))
	}
}

// TestVerdictAgainstSearchRules: a record is evidence for a request (the
// hover's verdict) exactly when one of its indexed pieces passes the rules a
// search applies to each piece (evidenceFilter.evidence, and the agent), on the
// sample run, with and without the interpreter, for requests of every kind.
func TestVerdictAgainstSearchRules(t *testing.T) {
	sample, err := filepath.Abs(filepath.Join("..", "testdata", "sample-run"))
	must(t, err)
	reqs := []Request{
		{}, {Episode: "episode-2"}, {Episode: "episode-2", Conversation: "conv-1"},
		{Episode: "episode-1", Conversation: "conv-1"}, {Episode: "episode-3", Conversation: "conv-4", Scope: "episode"},
		{Scope: "episode"}, {Episode: "episode-2", Conversation: "conv-2", Agent: "alice"},
		{Episode: "episode-2", Conversation: "nowhere"}, {Episode: "episode-10", Conversation: "conv-9"},
	}
	gen := t.TempDir()
	if _, err := rungen.Generate(context.Background(), gen, rungen.Options{Bytes: 1 << 20, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, Request{Episode: "episode-3", Conversation: "conv-1"}, Request{Episode: "episode-1", Conversation: "-"})
	for k, rules := range []*Interpreter{nil, mustRules(t), nil} {
		root := sample
		if k == 2 {
			root = gen
		}
		ix := openTest(t, Options{Root: root, Interpreter: rules})
		_, err := ix.Refresh(context.Background(), nil)
		must(t, err)
		checked := map[string]int{}
		for _, path := range ix.RecordFiles() {
			fs := ix.recordFile(path)
			agent := ix.state.Agents[fs.Agent]
			for _, req := range reqs {
				f := newFilter(&ix.state, ix.interpreter, req)
				passes := map[uint32]bool{} // by line
				each := func(s *corpus.Segment, d uint32) {
					if !s.Dead(d) && (req.Agent == "" || req.Agent == agent) && (&evidenceFilter{ix: ix, f: f}).evidence(s, d, fs) {
						passes[s.LineOf(d)] = true
					}
				}
				for _, r := range fs.Ranges {
					for d := r.Lo; d < r.Hi; d++ {
						each(r.Seg, d)
					}
				}
				for _, td := range fs.TailDocs() {
					each(td.Seg, td.Doc)
				}
				tab := fs.Records()
				for i := 0; i < tab.Len(); i++ {
					want := false
					for l := tab.Line(i); l <= tab.Last(i); l++ {
						want = want || passes[l]
					}
					reason := verdict(req, newFilter(&ix.state, ix.interpreter, req), fs, tab, i, agent)
					if (reason == "") != want {
						t.Fatalf("%s record %d (line %d), %+v: verdict %q, a piece passes: %v", path, i, tab.Line(i), req, reason, want)
					}
					checked[reason]++
				}
			}
		}
		// Every reason the sample run can show, shown.
		for _, r := range []string{"", ReasonLeftOut, ReasonOtherAgent, ReasonScope, ReasonNoContext, ReasonUnfielded, ReasonOtherConversation} {
			if checked[r] == 0 && root == sample {
				t.Errorf("interpreter %v: no record with verdict %q: %v", rules != nil, r, checked)
			}
		}
	}
}

// hidingWord masks every "classified" with "###": a placeholder without a
// term, so that masking can leave a record with none.
type hidingWord struct{}

func (hidingWord) Mask(text string) ([]masking.Span, int) {
	var out []masking.Span
	for i := 0; ; {
		j := strings.Index(text[i:], "classified")
		if j < 0 {
			return out, -1
		}
		out = append(out, masking.Span{Start: i + j, End: i + j + len("classified"), Placeholder: "###"})
		i += j + len("classified")
	}
}

// TestVerdictMaskedAndNoTerms: a record whose every term masking hides is
// not evidence because it is masked; one with no term at all, because it has
// none (spec §11).
func TestVerdictMaskedAndNoTerms(t *testing.T) {
	root := writeRun(t, map[string]string{"episode-1/a/a.log": "" +
		"2026-10-21 18:00:00.000 INFO  [s] [c] classified classified\n" +
		"  classified\n" +
		"2026-10-21 18:00:01.000 INFO  [s] [c] --- ...\n" +
		"2026-10-21 18:00:02.000 INFO  [s] [c] classified but not this\n"})
	ix := openTest(t, Options{Root: root, Masker: hidingWord{}})
	_, err := ix.Refresh(context.Background(), nil)
	must(t, err)
	path := filepath.Join(root, "episode-1/a/a.log")
	req := Request{Episode: "episode-1", Conversation: "c"}
	for line, want := range map[int]string{0: ReasonMasked, 1: ReasonMasked, 2: ReasonNoTerms, 3: ""} {
		facts, err := ix.RecordAt(context.Background(), path, line, req)
		must(t, err)
		if facts == nil || facts.Reason != want || facts.Evidence != (want == "") {
			t.Errorf("line %d: %+v, want reason %q", line, facts, want)
		}
	}
	out, err := ix.Outline(context.Background(), path, 0)
	must(t, err)
	if name := out.Runs[0].Records[0].Name; name != "18:00:00 ### ###" {
		t.Errorf("masked name %q", name)
	}
}

// TestTimesOffTheClock: a record whose time is off the table's clock keeps
// its time, in its place among the others.
func TestTimesOffTheClock(t *testing.T) {
	root := writeRun(t, map[string]string{"episode-1/a/a.history": "" +
		"2026-10-21 18:00:00 [s] [c] A on the clock\n" +
		"2026-13-21 18:00:00 [s] [c] A month 13\n" +
		"2026-10-21 18:00:01,500 [s] [c] A on the clock\n" +
		"2201-01-01 00:00:00 [s] [c] A year 2201\n" +
		"2026-10-21 18:00:02 [s] [c] A last\n"})
	ix := openTest(t, Options{Root: root})
	_, err := ix.Refresh(context.Background(), nil)
	must(t, err)
	tab := ix.recordFile(filepath.Join(root, "episode-1/a/a.history")).Records()
	for i, stamp := range []string{"2026-10-21 18:00:00", "2026-13-21 18:00:00", "2026-10-21 18:00:01,500", "2201-01-01 00:00:00", "2026-10-21 18:00:02"} {
		if got, want := tab.Time(i), recordformat.TimeKey([]byte(stamp)); got != want {
			t.Errorf("record %d: time %d, want %d (%s)", i, got, want, stamp)
		}
	}
	var cols records.Columns
	if cols.Append(tab); len(cols.Over) != 2 {
		t.Errorf("%d times off the clock, want 2", len(cols.Over))
	}
}

// TestGrowingRecordOneDiagnostic: a stack trace written a line at a time,
// each read on its own, stays one warning whose count grows (spec §9: a
// record completes across reads).
func TestGrowingRecordOneDiagnostic(t *testing.T) {
	root := writeRun(t, map[string]string{"episode-1/a/a.log": "2026-10-21 18:00:00.000 ERROR [s] [c] A failed\n"})
	path := filepath.Join(root, "episode-1/a/a.log")
	ix := openTest(t, Options{Root: root})
	for n := 1; n <= 6; n++ {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		_, err = fmt.Fprintf(f, "\tat x.Y.z%d(Y.java:%d)\n", n, n)
		must(t, err)
		must(t, f.Close())
		_, err = ix.Refresh(context.Background(), nil)
		must(t, err)
		ds := ix.Diagnostics(path, 0)
		// A stack trace: a Hint (spec §9, revision 3), its lines counted.
		if len(ds) != 1 || ds[0].Range.Start.Line != 1 || ds[0].Range.End.Line != n || ds[0].Severity != SeverityHint ||
			!strings.HasPrefix(ds[0].Message, "a stack trace: "+plural(n, "stack-trace line", "stack-trace lines")) {
			t.Fatalf("after %d lines of the trace:\n%s", n, dump(ds))
		}
	}
}
