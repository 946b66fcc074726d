package retriever

import (
	"context"
	"errors"
	"slices"
	"testing"

	"runls/retriever/internal/records"
)

// FuzzRecordsCursor: any cursor string is refused with an error naming the
// cursor, or read as a place; a place is written back to a cursor that reads
// as the same place, and the page it continues is the brute force's list
// after that place, or before it for a previous page's cursor (the last
// page's worth before it).
func FuzzRecordsCursor(f *testing.F) {
	root := writeRun(f, orderRun)
	ix := openTest(f, Options{Root: root})
	req := RecordsRequest{Episode: "episode-1", Conversation: "conv-1"}
	all := bruteListing(f, root, req, nil)
	q, err := req.parse()
	must(f, err)
	for _, r := range all {
		f.Add(records.Pos{Key: r.key, Rel: r.File, Line: uint32(r.Location.Range.Start.Line)}.Cursor(q.FP))
	}
	f.Add(records.Pos{Key: -1, Rel: "", Line: 0}.Cursor(q.FP))
	f.Add(records.Pos{Key: 1 << 62, Rel: "\xff", Line: 1 << 31}.Cursor(q.FP))
	f.Add("01")
	f.Add("zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		pos, before, perr := records.ParseCursor(c, q.FP)
		res, err := ix.Records(context.Background(), RecordsRequest{Episode: req.Episode, Conversation: req.Conversation, Cursor: c})
		if c == "" {
			return
		}
		var fe *FieldError
		if perr != nil {
			if !errors.As(err, &fe) || fe.Field != "cursor" || len(fe.Value) > 100 {
				t.Fatalf("cursor %q: %v, want an error naming the cursor, its value clipped", c, err)
			}
			return
		}
		written := pos.Cursor(q.FP)
		if before {
			written = pos.PreviousCursor(q.FP)
		}
		if again, againBefore, err := records.ParseCursor(written, q.FP); err != nil || again != pos || againBefore != before {
			t.Fatalf("place %+v (before: %v) written back reads as %+v (%v), %v", pos, before, again, againBefore, err)
		}
		if err != nil {
			t.Fatalf("cursor %q: %v", c, err)
		}
		var want []string
		for _, r := range all {
			if p := (records.Pos{Key: r.key, Rel: r.File, Line: uint32(r.Location.Range.Start.Line)}); before && p.Before(pos) || !before && pos.Before(p) {
				want = append(want, brief(r))
			}
		}
		if before && len(want) > DefaultRecordsLimit {
			want = want[len(want)-DefaultRecordsLimit:]
		}
		if got := briefs(res.Records); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("after %+v (a previous page's cursor: %v): %q, want %q", pos, before, got, want)
		}
	})
}
