package retriever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPiecesInLocationOrder: the engine is told that location order follows
// the documents' order within a file of a segment (bm25.Query.DocOrder,
// runNested), so that a templated line's thousands of ties in one file are
// decided by comparing document numbers. Through appends (a line written in
// two parts among them), a tail rewritten shorter then grown again, a
// deletion and the merges of many small updates' segments, every segment's
// live pieces of each file stay in (line, start) order, and the storm's
// query answers what ranking every piece by location order gives, item for
// item, at top 1, 5 and 10, with and without a context.
func TestPiecesInLocationOrder(t *testing.T) {
	const (
		storm1 = "episode-1/a/a.log"
		storm2 = "episode-2/b/b.log"
	)
	r := rand.New(rand.NewPCG(33, 7))
	warn := func(conv string, n int) string {
		var sb strings.Builder
		for range n {
			fmt.Fprintf(&sb, "2026-10-21 23:00:%02d.%03d WARN  [running] %sAlice Tool call: rate limited (attempt %d), retrying in %ds\n",
				r.IntN(60), r.IntN(1000), conv, 1+r.IntN(400), []int{1, 2, 4, 8, 16, 30, 60}[r.IntN(7)])
		}
		return sb.String()
	}
	root := writeRun(t, map[string]string{
		storm1:                  warn("", 40),
		storm2:                  warn("[conv-1] ", 30),
		"episode-2/b/b.history": rec("conv-1", "B said: rate limited, retrying later"),
		"episode-1/a/notes.txt": "rate limited retrying noted\n",
		"episode-2/b/gone.log":  warn("[conv-2] ", 10),
	})
	opts := Options{Root: root, Interpreter: mustRules(t)}
	ix := openTest(t, opts)
	b2 := warn("[conv-1] ", 30)
	writeFile(t, root, storm2, b2)
	for i := range 3 * mergeSmallAt {
		switch i % 4 {
		case 0: // a line in two writes: its first part indexed as the pending tail
			line := warn("", 1)
			appendFile(t, root, storm1, line[:len(line)/2])
			checkLocationOrder(t, ix)
			appendFile(t, root, storm1, line[len(line)/2:]+warn("", 5))
		case 1:
			appendFile(t, root, storm2, warn("[conv-1] ", 8))
		case 2: // the tail rewritten shorter, then grown again
			b2 = b2[:len(b2)/2] + warn("[conv-1] ", 3)
			writeFile(t, root, storm2, b2)
		case 3:
			appendFile(t, root, storm1, warn("", 3))
			appendFile(t, root, storm2, warn("[-] ", 4))
		}
		if i == mergeSmallAt {
			must(t, removeFile(root, "episode-2/b/gone.log"))
		}
		checkLocationOrder(t, ix)
	}
	if n := len(ix.state.Segments); n >= mergeSmallAt+1 {
		t.Fatalf("%d segments after %d updates: small ones are not merged, the test misses the merges", n, 3*mergeSmallAt)
	}
}

// checkLocationOrder brings ix up to date, checks that every segment's live
// pieces of a file are in location order, and that the storm's query ranks
// as brute force does.
func checkLocationOrder(t *testing.T, ix *Index) {
	t.Helper()
	search(t, ix, allEvidence("x"))
	ix.mu.RLock()
	for si, s := range ix.state.Segments {
		last := map[uint32][2]uint32{}
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.Dead(d) {
				continue
			}
			f, at := s.FileOf(d), [2]uint32{s.LineOf(d), s.StartOf(d)}
			if prev, ok := last[f]; ok && slices.Compare(prev[:], at[:]) >= 0 {
				ix.mu.RUnlock()
				t.Fatalf("segment %d: piece %d of %s at line %d, start %d, after one at %v", si, d, ix.state.File(f).Rel, at[0], at[1], prev)
			}
			last[f] = at
		}
	}
	ix.mu.RUnlock()
	for _, k := range []int{1, 5, 10} {
		for _, req := range []Request{
			{Query: "rate limited retrying", TopK: k},
			{Query: "rate limited retrying", Episode: "episode-1", Conversation: "conv-1", TopK: k},
			{Query: "rate limited retrying", Episode: "episode-2", Conversation: "conv-1", TopK: k},
		} {
			res, err := ix.Search(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteFiltered(t, ix, req)
			if got, w := placed(res.Items), placed(want); !slices.Equal(got, w) {
				t.Fatalf("%+v:\n got  %q\n want %q", req, got, w)
			}
		}
	}
}

// placed is each item's file, line, byte columns, score and text.
func placed(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = fmt.Sprintf("%s:%d:%d-%d %v %s", it.File, it.Location.Range.Start.Line, it.ByteStart, it.ByteEnd, it.Score, it.Text)
	}
	return out
}
