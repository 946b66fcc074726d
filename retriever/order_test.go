package retriever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestPiecesInLocationOrderLongLineReopenRename: what
// TestPiecesInLocationOrder does not reach keeps location order too: a line
// over MaxPieceChars (one line, several pieces, in their start order), an
// index reopened from its cache entry and then appended to (the restored
// segments beside the new ones), and a file renamed over a storm's file.
func TestPiecesInLocationOrderLongLineReopenRename(t *testing.T) {
	const storm = "episode-1/a/a.log"
	r := rand.New(rand.NewPCG(33, 8))
	warn := func(n int, msg string) string {
		var sb strings.Builder
		for range n {
			fmt.Fprintf(&sb, "2026-10-21 23:00:%02d.%03d WARN  [running] [conv-1] Alice Tool call: rate limited (attempt %d), retrying%s\n",
				r.IntN(60), r.IntN(1000), 1+r.IntN(400), msg)
		}
		return sb.String()
	}
	var long strings.Builder
	for i := 0; long.Len() < 3*MaxPieceChars; i++ {
		fmt.Fprintf(&long, " rate limited retrying part%d", i)
	}
	body := warn(20, "") + warn(1, long.String()) + warn(10, "")
	run := writeRun(t, map[string]string{
		storm:                   body,
		"episode-1/a/a.history": rec("conv-1", "A said: rate limited, retrying later"),
	})
	croot := cacheRoot(t)
	opts := Options{Root: run, Interpreter: mustRules(t), Cache: CacheOptions{Root: croot}, cacheDelay: time.Hour}
	ix := openTest(t, opts)
	checkLocationOrder(t, ix)
	// The long line (line 20) is several pieces, in their start order.
	ix.mu.RLock()
	var starts []uint32
	for _, s := range ix.state.Segments {
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if !s.Dead(d) && ix.state.File(s.FileOf(d)).Rel == storm && s.LineOf(d) == 20 {
				starts = append(starts, s.StartOf(d))
			}
		}
	}
	ix.mu.RUnlock()
	if len(starts) < 3 || !slices.IsSorted(starts) {
		t.Fatalf("the line of %d characters is pieces starting at %v, want 3 or more in order", long.Len(), starts)
	}
	appendFile(t, run, storm, warn(1, long.String()))
	checkLocationOrder(t, ix)
	must(t, ix.Close())

	// Reopened from the entry, then appended to.
	again, restored := reopened(t, opts, croot)
	if !restored {
		t.Fatal("not restored")
	}
	checkLocationOrder(t, again)
	for i := range 2 * mergeSmallAt {
		appendFile(t, run, storm, warn(3, ""))
		if i%3 == 0 {
			appendFile(t, run, storm, warn(1, long.String()))
		}
		checkLocationOrder(t, again)
	}

	// A file renamed over the storm's: its pieces replace the storm's.
	writeFile(t, run, "episode-1/a/next.log", warn(5, "")+warn(1, long.String())+warn(5, ""))
	checkLocationOrder(t, again)
	must(t, os.Rename(filepath.Join(run, "episode-1/a/next.log"), filepath.Join(run, storm)))
	checkLocationOrder(t, again)
	appendFile(t, run, storm, warn(4, ""))
	checkLocationOrder(t, again)
	assertSameAnswers(t, again, opts)
}
