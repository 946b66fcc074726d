package retriever

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// FuzzRecordsCursor: any cursor string is refused with an error naming the
// cursor, or read as a place; a place is written back to a cursor that reads
// as the same place, and the page it continues is the brute force's list
// after that place.
func FuzzRecordsCursor(f *testing.F) {
	root := writeRun(f, orderRun)
	ix := openTest(f, Options{Root: root})
	req := RecordsRequest{Episode: "episode-1", Conversation: "conv-1"}
	all := bruteListing(f, root, req, nil)
	q, err := req.parse()
	must(f, err)
	for _, r := range all {
		f.Add(recordPos{key: r.key, rel: r.File, line: uint32(r.Location.Range.Start.Line)}.cursor(q.fp))
	}
	f.Add(recordPos{key: -1, rel: "", line: 0}.cursor(q.fp))
	f.Add(recordPos{key: 1 << 62, rel: "\xff", line: 1 << 31}.cursor(q.fp))
	f.Add("01")
	f.Add("zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		pos, _, perr := parseCursor(c, q.fp)
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
		if again, _, err := parseCursor(pos.cursor(q.fp), q.fp); err != nil || again != pos {
			t.Fatalf("place %+v written back reads as %+v, %v", pos, again, err)
		}
		if err != nil {
			t.Fatalf("cursor %q: %v", c, err)
		}
		var want []string
		for _, r := range all {
			if pos.before(recordPos{key: r.key, rel: r.File, line: uint32(r.Location.Range.Start.Line)}) {
				want = append(want, brief(r))
			}
		}
		if got := briefs(res.Records); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("after %+v: %q, want %q", pos, got, want)
		}
	})
}
