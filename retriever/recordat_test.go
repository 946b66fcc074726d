package retriever

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// atRun is one episode of two files whose records interleave in time, one
// record of several lines, and a DEBUG record.
func atRun() map[string]string {
	var a, b strings.Builder
	for i := 0; i < 11; i++ {
		fmt.Fprintf(&a, "2026-10-21 18:00:%02d.000 INFO  [running] [conv-1] A record %d\n", 2*i, i)
		if i == 5 {
			a.WriteString("  a second line\n  a third line\n")
		}
		level := "WARN "
		if i == 7 {
			level = "DEBUG"
		}
		fmt.Fprintf(&b, "2026-10-21 18:00:%02d.000 %s [running] [conv-1] B record %d\n", 2*i+1, level, i)
	}
	return map[string]string{"episode-1/a/a.log": a.String(), "episode-1/b/b.log": b.String()}
}

// TestRecordsAt: a page asked at a record holds it at atIndex and starts
// limit/2 records before it (fewer at the list's start); previousCursor
// walks back page by page to the start, each page ending just before the
// one it came from; together the pages are the list (spec §13, revision 3).
func TestRecordsAt(t *testing.T) {
	root := writeRun(t, atRun())
	ix := openTest(t, Options{Root: root})
	all := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: MaxRecordsLimit}).Records
	if len(all) != 22 {
		t.Fatalf("%d records, want 22", len(all))
	}
	const limit = 6
	tests := []struct {
		name string
		idx  int // the record asked for, in the whole list
		line int // the line asked for, relative to the record's first
	}{
		{"the first record", 0, 0},
		{"a middle record", 11, 0},
		{"a continuation line means its record", 10, 2},
		{"the last record", 21, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := all[tt.idx]
			if tt.line > 0 && target.Location.Range.End.Line-target.Location.Range.Start.Line < tt.line {
				t.Fatalf("record %d has no line %d", tt.idx, tt.line)
			}
			at := target.Location
			at.Range.Start.Line += tt.line
			at.Range.End = at.Range.Start
			res := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: limit, At: &at})
			start := max(0, tt.idx-limit/2)
			want := briefs(all[start:min(len(all), start+limit)])
			if got := briefs(res.Records); !slices.Equal(got, want) {
				t.Fatalf("page\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			if res.AtIndex == nil || *res.AtIndex != tt.idx-start {
				t.Errorf("atIndex %v, want %d", res.AtIndex, tt.idx-start)
			}
			if (res.PreviousCursor != nil) != (start > 0) || (res.Cursor != nil) != (start+limit < len(all)) {
				t.Errorf("previousCursor %v, cursor %v: want them exactly when the list goes on", res.PreviousCursor, res.Cursor)
			}
			// Back to the start, page by page; then forward from the first page.
			got := briefs(res.Records)
			for page := res; page.PreviousCursor != nil; {
				prev := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: limit, Cursor: *page.PreviousCursor})
				if len(prev.Records) != limit && prev.PreviousCursor != nil {
					t.Fatalf("a previous page of %d records that does not start the list", len(prev.Records))
				}
				if prev.Cursor == nil {
					t.Fatalf("a previous page without a cursor")
				}
				got = append(briefs(prev.Records), got...)
				page = prev
			}
			if want := briefs(all[:min(len(all), start+limit)]); !slices.Equal(got, want) {
				t.Errorf("walking back:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
	// A record the filters leave out: the page is where it would be, and
	// no atIndex.
	debug := all[15] // B record 7 (DEBUG)
	if !strings.Contains(debug.Text, "B record 7") {
		t.Fatalf("record 15 is %q", debug.Text)
	}
	res := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: limit, MinLevel: "INFO", At: &debug.Location})
	if res.AtIndex != nil || len(res.Records) != limit || !strings.Contains(res.Records[limit/2].Text, "A record 8") {
		t.Errorf("at a record left out: atIndex %v, page %q", res.AtIndex, briefs(res.Records))
	}
}

// TestRecordsAtFollows: a record that grew is found at its new line; a
// cursor made before an append continues into it, and its page's
// previousCursor gives the page before it.
func TestRecordsAtFollows(t *testing.T) {
	root := writeRun(t, atRun())
	ix := openTest(t, Options{Root: root})
	first := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: 20})
	if first.Cursor == nil || first.PreviousCursor != nil {
		t.Fatalf("first page: cursor %v, previousCursor %v", first.Cursor, first.PreviousCursor)
	}
	appendFile(t, root, "episode-1/b/b.log", "  grown onto B record 10\n"+
		"2026-10-21 18:00:30.000 ERROR [running] [conv-1] B appended\n")
	all := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: MaxRecordsLimit}).Records
	last := all[len(all)-2] // B record 10, grown
	at := Location{URI: last.Location.URI, Range: Range{Start: Position{Line: last.Location.Range.End.Line}}}
	if !strings.Contains(last.Text, "grown onto") {
		t.Fatalf("record %q did not grow", last.Text)
	}
	res := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: 4, At: &at})
	if res.AtIndex == nil || res.Records[*res.AtIndex].Text != last.Text {
		t.Errorf("at the grown line: atIndex %v, page %q", res.AtIndex, briefs(res.Records))
	}
	next := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: 20, Cursor: *first.Cursor})
	if got, want := briefs(next.Records), briefs(all[20:]); !slices.Equal(got, want) {
		t.Errorf("the cursor of before the append:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if next.PreviousCursor == nil {
		t.Fatal("the second page has no previousCursor")
	}
	back := mustRecords(t, ix, RecordsRequest{Episode: "episode-1", Limit: 20, Cursor: *next.PreviousCursor})
	if got, want := briefs(back.Records), briefs(all[:20]); !slices.Equal(got, want) || back.PreviousCursor != nil {
		t.Errorf("back from the second page:\n  %s\nwant\n  %s (previousCursor %v)", strings.Join(got, "\n  "), strings.Join(want, "\n  "), back.PreviousCursor)
	}
}

func TestRecordsAtInvalid(t *testing.T) {
	root := writeRun(t, atRun())
	ix := openTest(t, Options{Root: root})
	other := writeRun(t, map[string]string{"episode-1/a/a.log": "x\n"})
	for _, tt := range []struct {
		req  RecordsRequest
		name string
	}{
		{RecordsRequest{Episode: "episode-1", At: &Location{URI: "http://x/y"}}, "not a file URI"},
		{RecordsRequest{Episode: "episode-1", At: &Location{URI: FileURI(filepath.Join(other, "episode-1/a/a.log"))}}, "another run's file"},
		{RecordsRequest{Episode: "episode-2", At: &Location{URI: FileURI(filepath.Join(root, "episode-1/a/a.log"))}}, "another episode's file"},
		{RecordsRequest{Episode: "episode-1", Agent: "b", At: &Location{URI: FileURI(filepath.Join(root, "episode-1/a/a.log"))}}, "another agent's file"},
		{RecordsRequest{Episode: "episode-1", Cursor: "01", At: &Location{URI: FileURI(filepath.Join(root, "episode-1/a/a.log"))}}, "with a cursor"},
	} {
		_, err := ix.Records(t.Context(), tt.req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "at" {
			t.Errorf("%s: %v, want an error naming at", tt.name, err)
		}
	}
}
