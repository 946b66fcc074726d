package retriever

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"runls/masking"
	"runls/retriever/internal/records"
)

// Table tests of run/records (spec §13) on a small run shaped for its
// rules: equal times across agents, `,SSS` and `.SSS`, a time without
// milliseconds before the same second's `.000`, a log file whose times go
// back, a line before a file's first record, unfielded records, a record
// file deeper in an agent's folder, and files that are never listed.

var orderRun = map[string]string{
	"episode-1/alice/alice.history": "" +
		"2026-10-21 18:00:00 [running] [conv-1] Alice was told: go\n" +
		"2026-10-21 18:00:00,500 [running] [conv-1] Alice said: comma ms\n" +
		"2026-10-21 18:00:02 [running] [-] Alice idle\n",
	"episode-1/bob/bob.log": "" +
		"--- log opened ---\n" +
		"2026-10-21 18:00:00.000 INFO  [running] [conv-1] Bob dot zero\n" +
		"2026-10-21 18:00:00.500 WARN  [running] [conv-1] Bob dot ms, the same time as comma ms\n" +
		"2026-10-21 18:00:00 DEBUG [running] [conv-2] Bob back in time\n" +
		"  indented\n" +
		"java.lang.Exception: unindented\n" +
		"\n" +
		"2026-10-21 18:00:02 ERROR [running] [conv-1] Bob the same second as Alice idle\n",
	"episode-1/bob/sub/deep.history": "2026-10-21 18:00:01 [running] [conv-1] Bob from a deeper file\n",
	"episode-1/carol/carol.history":  "2026-10-21 18:00:01 [running] Carol unfielded\n",
	"episode-1/carol/notes.md":       "2026-10-21 17:00:00 [running] [conv-1] a note is never a record\n",
	"episode-1/run.log":              "2026-10-21 17:00:00 INFO  [running] [conv-1] no agent's\n",
	"episode-2/alice/alice.history":  "2026-10-20 10:00:00 [running] [conv-1] another episode\n",
}

// brief is a record as the table tests write it.
func brief(r Record) string {
	or := func(s *string, none string) string {
		if s == nil {
			return none
		}
		return *s
	}
	return fmt.Sprintf("%s:%d %s %s [%s] %s", r.File, r.Location.Range.Start.Line, or(r.Time, "-"), or(r.Level, "-"), or(r.Conversation, "none"), r.Text)
}

func briefs(recs []Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, brief(r))
	}
	return out
}

func mustRecords(t testing.TB, ix *Index, req RecordsRequest) RecordsResult {
	t.Helper()
	res, err := ix.Records(context.Background(), req)
	if err != nil {
		t.Fatalf("records %+v: %v", req, err)
	}
	return res
}

// allPages follows the cursors to the end of the list.
func allPages(t testing.TB, ix *Index, req RecordsRequest) ([]Record, int) {
	t.Helper()
	var out []Record
	pages := 0
	for {
		res := mustRecords(t, ix, req)
		pages++
		out = append(out, res.Records...)
		if res.Cursor == nil {
			return out, pages
		}
		if len(res.Records) != req.Limit && req.Limit != 0 {
			t.Fatalf("a page of %d records with a cursor, limit %d", len(res.Records), req.Limit)
		}
		req.Cursor = *res.Cursor
	}
}

const (
	aliceTold  = "episode-1/alice/alice.history:0 2026-10-21 18:00:00 - [conv-1] Alice was told: go"
	aliceComma = "episode-1/alice/alice.history:1 2026-10-21 18:00:00,500 - [conv-1] Alice said: comma ms"
	aliceIdle  = "episode-1/alice/alice.history:2 2026-10-21 18:00:02 - [-] Alice idle"
	bobOpened  = "episode-1/bob/bob.log:0 - - [none] --- log opened ---"
	bobZero    = "episode-1/bob/bob.log:1 2026-10-21 18:00:00.000 INFO [conv-1] Bob dot zero"
	bobDot     = "episode-1/bob/bob.log:2 2026-10-21 18:00:00.500 WARN [conv-1] Bob dot ms, the same time as comma ms"
	bobBack    = "episode-1/bob/bob.log:3 2026-10-21 18:00:00 DEBUG [conv-2] Bob back in time\nindented\njava.lang.Exception: unindented\n"
	bobSecond  = "episode-1/bob/bob.log:7 2026-10-21 18:00:02 ERROR [conv-1] Bob the same second as Alice idle"
	bobDeep    = "episode-1/bob/sub/deep.history:0 2026-10-21 18:00:01 - [conv-1] Bob from a deeper file"
	carolUnf   = "episode-1/carol/carol.history:0 2026-10-21 18:00:01 - [none] Carol unfielded"
)

func TestRecordsOrderAndFilters(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, orderRun)})
	tests := []struct {
		name string
		req  RecordsRequest
		want []string
	}{
		// Without a time first; then time as written, `,` and `.` alike
		// (18:00:00 before 18:00:00.000, as the shorter text); equal times
		// by path, then line; bob.log's times go back at line 3.
		{"every record", RecordsRequest{Episode: "episode-1"},
			[]string{bobOpened, aliceTold, bobBack, bobZero, aliceComma, bobDot, bobDeep, carolUnf, aliceIdle, bobSecond}},
		{"a conversation", RecordsRequest{Episode: "episode-1", Conversation: "conv-1"},
			[]string{aliceTold, bobZero, aliceComma, bobDot, bobDeep, bobSecond}},
		{"outside any conversation", RecordsRequest{Episode: "episode-1", Conversation: "-"}, []string{aliceIdle}},
		{"a conversation of one record", RecordsRequest{Episode: "episode-1", Conversation: "conv-2"}, []string{bobBack}},
		{"a conversation never written", RecordsRequest{Episode: "episode-1", Conversation: "conv-9"}, []string{}},
		{"a conversation of another episode only", RecordsRequest{Episode: "episode-2", Conversation: "conv-2"}, []string{}},
		{"an agent", RecordsRequest{Episode: "episode-1", Agent: "bob"},
			[]string{bobOpened, bobBack, bobZero, bobDot, bobDeep, bobSecond}},
		{"an agent and a conversation", RecordsRequest{Episode: "episode-1", Agent: "alice", Conversation: "conv-1"}, []string{aliceTold, aliceComma}},
		{"no such agent", RecordsRequest{Episode: "episode-1", Agent: "zed"}, []string{}},
		// History records and the line before the first record have no level: kept.
		// Records without a level (history records, a line before a file's
		// first record) are left out by any minLevel (spec §13, revision 3).
		{"minLevel WARN", RecordsRequest{Episode: "episode-1", MinLevel: "WARN"}, []string{bobDot, bobSecond}},
		{"minLevel in lower case", RecordsRequest{Episode: "episode-1", Agent: "bob", MinLevel: "error"}, []string{bobSecond}},
		{"minLevel TRACE keeps every record with a level", RecordsRequest{Episode: "episode-1", Agent: "bob", MinLevel: "TRACE"},
			[]string{bobBack, bobZero, bobDot, bobSecond}},
		// To the second, inclusive, milliseconds or not; no time: left out.
		{"from and to one second", RecordsRequest{Episode: "episode-1", From: "2026-10-21 18:00:00", To: "2026-10-21 18:00:00"},
			[]string{aliceTold, bobBack, bobZero, aliceComma, bobDot}},
		{"from", RecordsRequest{Episode: "episode-1", From: "2026-10-21 18:00:01"}, []string{bobDeep, carolUnf, aliceIdle, bobSecond}},
		{"to", RecordsRequest{Episode: "episode-1", To: "2026-10-21 17:59:59"}, []string{}},
		{"to, a conversation", RecordsRequest{Episode: "episode-1", Conversation: "conv-1", To: "2026-10-21 18:00:01"},
			[]string{aliceTold, bobZero, aliceComma, bobDot, bobDeep}},
		{"every filter", RecordsRequest{Episode: "episode-1", Conversation: "conv-1", Agent: "bob", MinLevel: "WARN", From: "2026-10-21 18:00:00", To: "2026-10-21 18:00:02"},
			[]string{bobDot, bobSecond}},
		{"episode with leading zeros", RecordsRequest{Episode: "episode-01", Conversation: "-"}, []string{aliceIdle}},
		{"no such episode folder", RecordsRequest{Episode: "episode-7"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRecords(t, ix, tt.req)
			if got := briefs(res.Records); !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if res.Cursor != nil {
				t.Errorf("cursor %q on the only page", *res.Cursor)
			}
			data, err := json.Marshal(res)
			must(t, err)
			if !strings.HasPrefix(string(data), `{"records":[`) || !strings.HasSuffix(string(data), `"cursor":null,"previousCursor":null}`) {
				t.Errorf("JSON %s", data)
			}
		})
	}
}

func TestRecordsFields(t *testing.T) {
	root := writeRun(t, orderRun)
	ix := openTest(t, Options{Root: root})
	res := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Agent: "bob"})
	real, err := filepath.EvalSymlinks(root)
	must(t, err)
	got, err := json.Marshal(res.Records[:2])
	must(t, err)
	want := `[{"location":{"uri":"` + FileURI(filepath.Join(real, "episode-1/bob/bob.log")) + `","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":18}}},` +
		`"time":null,"level":null,"state":"","conversation":null,"agent":"bob","episode":"episode-1","text":"--- log opened ---"},` +
		`{"location":{"uri":"` + FileURI(filepath.Join(real, "episode-1/bob/bob.log")) + `","range":{"start":{"line":3,"character":0},"end":{"line":6,"character":0}}},` +
		`"time":"2026-10-21 18:00:00","level":"DEBUG","state":"running","conversation":"conv-2","agent":"bob","episode":"episode-1","text":"Bob back in time\nindented\njava.lang.Exception: unindented\n"}]`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if res.Records[1].Path != filepath.Join(real, "episode-1/bob/bob.log") || res.Records[1].Lines != nil {
		t.Errorf("path %q, lines %q", res.Records[1].Path, res.Records[1].Lines)
	}
	res = mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Conversation: "conv-2", Lines: true})
	if want := []string{"2026-10-21 18:00:00 DEBUG [running] [conv-2] Bob back in time", "  indented", "java.lang.Exception: unindented", ""}; !slices.Equal(res.Records[0].Lines, want) {
		t.Errorf("lines %q, want %q", res.Records[0].Lines, want)
	}
}

// TestRecordsPaging: for every page size, the pages together are the one
// big answer, each full but the last, the last without a cursor.
func TestRecordsPaging(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, orderRun)})
	for _, req := range []RecordsRequest{
		{Episode: "episode-1"},
		{Episode: "episode-1", Conversation: "conv-1"},
		{Episode: "episode-1", Agent: "bob", From: "2026-10-21 18:00:00"},
		{Episode: "episode-1", MinLevel: "INFO", To: "2026-10-21 18:00:01"},
	} {
		whole := mustRecords(t, ix, req)
		for limit := 1; limit <= len(whole.Records)+1; limit++ {
			req.Limit = limit
			got, pages := allPages(t, ix, req)
			if !slices.Equal(briefs(got), briefs(whole.Records)) {
				t.Errorf("%+v: pages give\n  %s\nwant\n  %s", req, strings.Join(briefs(got), "\n  "), strings.Join(briefs(whole.Records), "\n  "))
			}
			if want := max(1, (len(whole.Records)+limit-1)/limit); pages != want {
				t.Errorf("%+v: %d pages, want %d", req, pages, want)
			}
		}
	}
	// A page that ends just at the list's end has no cursor.
	res := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Conversation: "conv-1", Limit: 6})
	if len(res.Records) != 6 || res.Cursor != nil {
		t.Errorf("%d records, cursor %v", len(res.Records), res.Cursor)
	}
	// CursorAfter continues after any record of a page.
	res = mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: 5})
	rest := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Cursor: res.CursorAfter(1)})
	whole := mustRecords(t, ix, RecordsRequest{Episode: "episode-1"})
	if !slices.Equal(briefs(rest.Records), briefs(whole.Records[2:])) {
		t.Errorf("after record 1: %q", briefs(rest.Records))
	}
}

func TestRecordsCursorErrors(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, orderRun)})
	page := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Conversation: "conv-1", Limit: 2})
	c := *page.Cursor
	for _, req := range []RecordsRequest{
		{Episode: "episode-1", Conversation: "conv-2", Cursor: c},
		{Episode: "episode-1", Cursor: c},
		{Episode: "episode-2", Conversation: "conv-1", Cursor: c},
		{Episode: "episode-1", Conversation: "conv-1", Agent: "bob", Cursor: c},
		{Episode: "episode-1", Conversation: "conv-1", MinLevel: "WARN", Cursor: c},
		{Episode: "episode-1", Conversation: "conv-1", From: "2026-10-21 18:00:00", Cursor: c},
	} {
		_, err := ix.Records(context.Background(), req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "cursor" || !strings.Contains(fe.Reason, "another list") {
			t.Errorf("%+v: %v, want a cursor error saying it was made for another list", req, err)
		}
	}
	// The limit may change from page to page; episode-01 is episode-1.
	res := mustRecords(t, ix, RecordsRequest{Episode: "episode-01", Conversation: "conv-1", Limit: 100, Cursor: c})
	if want := []string{aliceComma, bobDot, bobDeep, bobSecond}; !slices.Equal(briefs(res.Records), want) {
		t.Errorf("continued: %q", briefs(res.Records))
	}
	for _, bad := range []string{"zz", "01", c[:len(c)-1], "03" + c[2:], strings.ToUpper(c) + "g", c[:18] + "ff"} {
		_, err := ix.Records(context.Background(), RecordsRequest{Episode: "episode-1", Conversation: "conv-1", Cursor: bad})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "cursor" {
			t.Errorf("cursor %q: %v, want a cursor error", bad, err)
		}
	}
}

// TestRecordsBadParams: each invalid field is named.
func TestRecordsBadParams(t *testing.T) {
	ix := openTest(t, Options{Root: writeRun(t, orderRun)})
	tests := []struct {
		req   RecordsRequest
		field string
	}{
		{RecordsRequest{}, "episode"},
		{RecordsRequest{Episode: "2"}, "episode"},
		{RecordsRequest{Episode: "episode-"}, "episode"},
		{RecordsRequest{Episode: "episode-x1"}, "episode"},
		{RecordsRequest{Episode: "episode-1", Agent: "../bob"}, "agent"},
		{RecordsRequest{Episode: "episode-1", Agent: ".."}, "agent"},
		{RecordsRequest{Episode: "episode-1", Agent: `a\b`}, "agent"},
		{RecordsRequest{Episode: "episode-1", MinLevel: "LOUD"}, "minLevel"},
		{RecordsRequest{Episode: "episode-1", MinLevel: "INFO "}, "minLevel"},
		{RecordsRequest{Episode: "episode-1", From: "2026-10-21"}, "from"},
		{RecordsRequest{Episode: "episode-1", From: "2026-10-21 18:00:00,000"}, "from"},
		{RecordsRequest{Episode: "episode-1", From: "2026-10-21T18:00:00"}, "from"},
		{RecordsRequest{Episode: "episode-1", To: "18:00:00"}, "to"},
		{RecordsRequest{Episode: "episode-1", From: "2026-10-21 18:00:01", To: "2026-10-21 18:00:00"}, "to"},
		{RecordsRequest{Episode: "episode-1", Limit: -1}, "limit"},
		{RecordsRequest{Episode: "episode-1", Limit: MaxRecordsLimit + 1}, "limit"},
		{RecordsRequest{Episode: "episode-1", Cursor: "not a cursor"}, "cursor"},
	}
	for _, tt := range tests {
		_, err := ix.Records(context.Background(), tt.req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%+v: %v, want an error naming %s", tt.req, err, tt.field)
		}
		if err := tt.req.Validate(); err == nil {
			t.Errorf("%+v: Validate passes", tt.req)
		}
	}
	if _, err := ix.Records(context.Background(), RecordsRequest{Episode: "episode-1", Limit: MaxRecordsLimit, From: "2026-10-21 18:00:00", To: "2026-10-21 18:00:00"}); err != nil {
		t.Errorf("the largest limit, from = to: %v", err)
	}
}

// TestRecordsAfterChanges: a cursor of an older state of the files gives
// the records after its place in the files as they are now: those appended
// since (after the place), none twice, in order; one that sorts before the
// place (a late record with an earlier time, a rewritten file) is not given.
func TestRecordsAfterChanges(t *testing.T) {
	root := writeRun(t, orderRun)
	ix := openTest(t, Options{Root: root})
	req := RecordsRequest{Episode: "episode-1", Conversation: "conv-1", Limit: 3}
	page := mustRecords(t, ix, req)
	if want := []string{aliceTold, bobZero, aliceComma}; !slices.Equal(briefs(page.Records), want) {
		t.Fatalf("page 1: %q", briefs(page.Records))
	}
	appendFile(t, root, "episode-1/bob/bob.log", "2026-10-21 18:00:00.200 INFO  [running] [conv-1] Bob late, before the place\n")
	appendFile(t, root, "episode-1/alice/alice.history", "2026-10-21 18:00:03 [running] [conv-1] Alice appended\n")
	req.Cursor, req.Limit = *page.Cursor, 0
	got := mustRecords(t, ix, req)
	want := []string{bobDot, bobDeep, bobSecond, "episode-1/alice/alice.history:3 2026-10-21 18:00:03 - [conv-1] Alice appended"}
	if !slices.Equal(briefs(got.Records), want) {
		t.Errorf("after appends:\n  %s", strings.Join(briefs(got.Records), "\n  "))
	}
	checkAfterPlace(t, root, req, page.Records[len(page.Records)-1], got.Records)

	// A file rewritten between pages: the next page is of its new text.
	req = RecordsRequest{Episode: "episode-1", Limit: 4}
	page = mustRecords(t, ix, req)
	must(t, os.WriteFile(filepath.Join(root, "episode-1/carol/carol.history"), []byte(""+
		"2026-10-21 17:00:00 [running] [conv-1] Carol rewritten, now before the place\n"+
		"2026-10-21 18:00:01,900 [running] [conv-1] Carol rewritten\n"), 0o644))
	req.Cursor, req.Limit = *page.Cursor, 0
	got = mustRecords(t, ix, req)
	checkAfterPlace(t, root, req, page.Records[len(page.Records)-1], got.Records)
	if s := strings.Join(briefs(got.Records), "\n"); !strings.Contains(s, "Carol rewritten\n") || strings.Contains(s, "now before") || strings.Contains(s, "Carol unfielded") {
		t.Errorf("after a rewrite:\n%s", s)
	}
}

// checkAfterPlace: got is the brute-force listing of the files as they are
// now, from the first record after last's place.
func checkAfterPlace(t *testing.T, root string, req RecordsRequest, last Record, got []Record) {
	t.Helper()
	req.Cursor = ""
	all := bruteListing(t, root, req, nil)
	place := records.Pos{Key: last.key, Rel: last.File, Line: uint32(last.Location.Range.Start.Line)}
	var want []Record
	for _, r := range all {
		if place.Before(records.Pos{Key: r.key, Rel: r.File, Line: uint32(r.Location.Range.Start.Line)}) {
			want = append(want, r)
		}
	}
	if !slices.Equal(briefs(got), briefs(want)) {
		t.Errorf("after the place of %s:\n got  %s\n want %s", brief(last), strings.Join(briefs(got), "\n      "), strings.Join(briefs(want), "\n      "))
	}
}

// TestRecordsMasking: with masking on, texts are masked as whole records
// (a key block over several lines hidden whole), and so are states,
// conversation ids and the lines as written.
func TestRecordsMasking(t *testing.T) {
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	run := map[string]string{
		"episode-1/alice/alice.log": "" +
			"2026-10-21 18:00:00.000 INFO  [running] [conv-1] Alice read /home/alice/.ssh/config\n" +
			"2026-10-21 18:00:01.000 INFO  [running] [conv-1] Alice pasted a key\n" +
			"-----BEGIN RSA PRIVATE KEY-----\n" +
			"  MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n" +
			"  aFDrBz9vFqU4yQIDAQABAoIBAHq3dLjNCVz4SmSZnQ5+QKlFTxt0sbaUC8bq1YoB\n" +
			"-----END RSA PRIVATE KEY-----\n" +
			"2026-10-21 18:00:02.000 INFO  [/home/alice/state] [" + token + "] Alice odd fields\n",
	}
	root := writeRun(t, run)
	ix := openTest(t, Options{Root: root, Masker: masking.HidingOutside(root)})
	res := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Lines: true})
	if len(res.Records) != 3 {
		t.Fatalf("%d records", len(res.Records))
	}
	data, err := json.Marshal(res)
	must(t, err)
	for _, r := range res.Records {
		data = append(data, strings.Join(r.Lines, "\n")...)
	}
	for _, secret := range []string{"/home/alice", "MIIEow", "aFDrBz9", "BEGIN RSA", token} {
		if strings.Contains(string(data), secret) {
			t.Errorf("%q is in the answer:\n%s", secret, data)
		}
	}
	if r := res.Records[1]; r.Text != "Alice pasted a key\n"+masking.SecretPlaceholder || len(r.Lines) != 5 || r.Lines[1] != masking.SecretPlaceholder || r.Lines[4] != masking.SecretPlaceholder {
		t.Errorf("key block: text %q, lines %q", r.Text, r.Lines)
	}
	if r := res.Records[2]; r.State != masking.PathPlaceholder || r.Conversation == nil || *r.Conversation != masking.SecretPlaceholder {
		t.Errorf("fields: state %q, conversation %v", r.State, r.Conversation)
	}
	if r := res.Records[0]; r.Text != "Alice read "+masking.PathPlaceholder || r.Location.Range.End.Character != 83 {
		t.Errorf("path: %q, range %+v (of the line as written)", r.Text, r.Location.Range)
	}
	// The conversation is listed by its id as written.
	if got := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Conversation: token}); len(got.Records) != 1 {
		t.Errorf("by its token: %d records", len(got.Records))
	}
}

// TestRecordsListGolden writes the lists of a few requests on the ordering
// run and on the sample run, every field of every record, and compares
// them with golden files (go test -run RecordsListGolden -update rewrites
// them).
func TestRecordsListGolden(t *testing.T) {
	order := writeRun(t, orderRun)
	sample, err := filepath.Abs(filepath.Join("..", "testdata", "sample-run"))
	must(t, err)
	cases := []struct {
		name string
		root string
		reqs []RecordsRequest
	}{
		{"ordering", order, []RecordsRequest{
			{Episode: "episode-1"},
			{Episode: "episode-1", Conversation: "conv-1", Limit: 4},
			{Episode: "episode-1", MinLevel: "INFO", From: "2026-10-21 18:00:00", To: "2026-10-21 18:00:01"},
		}},
		{"sample", sample, []RecordsRequest{
			{Episode: "episode-2", Conversation: "conv-1"},
			{Episode: "episode-2", Conversation: "-"},
			{Episode: "episode-1", Agent: "alice"},
			{Episode: "episode-2", Agent: "bob", MinLevel: "WARN"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix := openTest(t, Options{Root: c.root})
			real, err := filepath.EvalSymlinks(c.root)
			must(t, err)
			var b strings.Builder
			for _, req := range c.reqs {
				data, err := json.Marshal(req)
				must(t, err)
				fmt.Fprintf(&b, "== %s\n", data)
				res := mustRecords(t, ix, req)
				for _, r := range res.Records {
					rg := r.Location.Range
					fmt.Fprintf(&b, "%d:%d-%d:%d %s\n", rg.Start.Line, rg.Start.Character, rg.End.Line, rg.End.Character,
						strings.ReplaceAll(brief(r), "\n", `\n`))
					fmt.Fprintf(&b, "    agent %s · %s · state %q · %s\n", r.Agent, r.Episode, r.State, strings.TrimPrefix(r.Location.URI, FileURI(real)))
				}
				if res.Cursor != nil {
					fmt.Fprintf(&b, "cursor: more\n")
				}
			}
			checkGolden(t, filepath.Join("testdata", "golden", "recordlist", c.name+".txt"), []byte(b.String()))
		})
	}
}
