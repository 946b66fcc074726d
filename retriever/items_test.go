package retriever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runls/masking"
	"strings"
	"testing"
)

// TestItemsReusedBufferEqualsFresh: items reads every hit's line into one
// buffer reused from hit to hit (and from search to search), through the
// file's mapping; each item must be the one a fresh buffer and a pread give
// (the plain path), for every live piece of
// a run of short, long (past 4 KiB, past the line index's block), CRLF,
// invalid UTF-8 and JSON lines, in random orders, so that a line read after
// a longer one finds the longer one's bytes behind it. Then a file is
// rewritten under the index (a line changed, keeping its length) and
// another cut short: their pieces are left out of both, and every other
// item is still the same.
func TestItemsReusedBufferEqualsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		b := make([]byte, 3+rng.IntN(8))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	line := func(words int) string {
		ws := make([]string, words)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	var notes, log, jsonl strings.Builder
	for i := range 400 {
		switch i % 7 {
		case 0:
			fmt.Fprintf(&notes, "%s\n", line(1+rng.IntN(4)))
		case 1:
			fmt.Fprintf(&notes, "%s\n", line(600+rng.IntN(900))) // 4-11 KB
		case 2:
			fmt.Fprintf(&notes, "%s\r\n", line(5))
		case 3:
			fmt.Fprintf(&notes, "%s \xff\xfe %s\n", word(), word())
		default:
			fmt.Fprintf(&notes, "%s\n", line(3+rng.IntN(20)))
		}
		fmt.Fprintf(&log, "2026-10-21 18:00:%02d,%03d %s [main] [conv-%d] %s\n", i%60, i%1000, []string{"INFO ", "WARN ", "ERROR"}[i%3], i%4, line(2+rng.IntN(30)))
		if i%9 == 0 {
			fmt.Fprintf(&log, "\tat more.frames(%s.java:%d)\n", word(), i)
		}
		fmt.Fprintf(&jsonl, `{"time":"2026-10-21T18:00:%02dZ","level":"warn","message":"%s\n%s"}`+"\n", i%60, line(4), line(1+rng.IntN(40)))
	}
	files := map[string]string{
		"episode-1/a/notes.txt": notes.String(),
		"episode-1/a/a.log":     log.String(),
		"episode-2/b/b.jsonl":   jsonl.String(),
	}
	root := writeRun(t, files)
	ix := openTest(t, Options{Root: root})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	all := livePieceHits(ix)
	if len(all) < 1000 {
		t.Fatalf("%d pieces: want a run of more", len(all))
	}
	// check compares the items of hits in random orders, the last round
	// every live piece, and returns how many of those the items left out.
	check := func(what string, gone func(Item) bool) (left int) {
		t.Helper()
		for round := range 4 {
			hits := append([]hit(nil), all...)
			rng.Shuffle(len(hits), func(i, j int) { hits[i], hits[j] = hits[j], hits[i] })
			if round < 3 {
				hits = hits[:50+round*400]
			}
			agents := make([]string, len(hits))
			ix.mu.RLock()
			for i, h := range hits {
				agents[i] = ix.state.Agents[h.fs.Agent]
			}
			got := ix.items(hits, agents).Items
			var want []Item
			ix.rb.plainReads = true
			for i, h := range hits {
				var fresh []byte
				if it, ok := itemAlone(ix, h, agents[i], &fresh); ok {
					want = append(want, it)
				}
			}
			ix.rb.plainReads = false
			ix.mu.RUnlock()
			if len(got) != len(want) {
				t.Fatalf("%s: %d items, %d with a fresh buffer each", what, len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: item %d differs:\n got %+v\nwant %+v", what, i, got[i], want[i])
				}
				if gone(got[i]) {
					t.Fatalf("%s: item %d should have been left out: %+v", what, i, got[i])
				}
			}
			left = len(hits) - len(got)
			t.Logf("%s, round %d: %d hits, %d items, %d left out", what, round, len(hits), len(got), left)
		}
		return left
	}
	if left := check("as indexed", func(Item) bool { return false }); left != 0 {
		t.Fatalf("%d pieces left out of an index of the files as they are", left)
	}
	var prose, long int
	for _, it := range ix.items(all, make([]string, len(all))).Items {
		if it.ByteEnd-it.ByteStart > len(it.Text) || strings.HasSuffix(it.File, ".jsonl") {
			prose++
		}
		if it.ByteEnd > 4<<10 {
			long++
		}
	}
	if prose == 0 || long == 0 {
		t.Fatalf("%d pieces of JSON lines, %d past 4 KiB of their line: want some of each", prose, long)
	}

	// A line of the notes changed on disk, its length kept, and the log cut
	// after its 100th line: no index update sees either before the items.
	// The log's handle, open since the items above, maps it as it was: its
	// reads past the cut fault, and are left out as the preads are.
	notesPath := filepath.Join(root, "episode-1/a/notes.txt")
	lines := strings.SplitAfter(files["episode-1/a/notes.txt"], "\n")
	const changed = 11 // a line of words (i%7 == 4)
	old := lines[changed]
	lines[changed] = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return 'a' + (r-'a'+1)%26
		}
		return r
	}, old)
	must(t, os.WriteFile(notesPath, []byte(strings.Join(lines, "")), 0o644))
	logLines := strings.SplitAfter(files["episode-1/a/a.log"], "\n")
	must(t, os.WriteFile(filepath.Join(root, "episode-1/a/a.log"), []byte(strings.Join(logLines[:100], "")), 0o644))
	gone := func(h hit) bool {
		line := h.seg.LineOf(h.doc)
		return h.fs.Rel == "episode-1/a/notes.txt" && line == changed || h.fs.Rel == "episode-1/a/a.log" && line >= 100
	}
	want := 0
	for _, h := range all {
		if gone(h) {
			want++
		}
	}
	left := check("after the change", func(it Item) bool {
		return it.File == "episode-1/a/notes.txt" && it.Location.Range.Start.Line == changed ||
			it.File == "episode-1/a/a.log" && it.Location.Range.Start.Line >= 100
	})
	if left != want {
		t.Fatalf("after the change: %d pieces left out, want the %d of the changed line and the cut lines", left, want)
	}
}

// livePieceHits is every live piece of the index as a hit.
func livePieceHits(ix *Index) []hit {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []hit
	for _, s := range ix.state.Segments {
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.Dead(d) {
				continue
			}
			id := s.FileOf(d)
			out = append(out, hit{score: float64(d), seg: s, doc: d, tag: id, fs: ix.state.File(id)})
		}
	}
	return out
}

// itemAlone makes the item of one hit on its own, its head and then its
// text, as items makes them for all hits at once.
func itemAlone(ix *Index, h hit, agent string, buf *[]byte) (Item, bool) {
	var it Item
	p := ix.itemHead(h, agent, ix.rb.fileName(h.fs.Rel), &it)
	if !ix.itemText(h, p, &it, buf) {
		return Item{}, false
	}
	return it, true
}

// TestItemsMaskedCutMidLine: a masked piece's text cannot be checked
// against its key (the key is the masked text's), only its line's length:
// a file cut within a line under its mapping read zeros past the cut,
// which passed for the line's bytes and made an item of a line no longer
// there (the review of 81a5add). The items after the cut are those a pread
// makes: none at or past the cut line.
func TestItemsMaskedCutMidLine(t *testing.T) {
	var notes strings.Builder
	for i := range 400 {
		fmt.Fprintf(&notes, "alpha%d beta /etc/secret/key%d gamma\n", i, i)
	}
	root := writeRun(t, map[string]string{"episode-1/a/notes.txt": notes.String()})
	ix := openTest(t, Options{Root: root, Masker: masking.HidingOutside(root)})
	if _, err := ix.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	all := livePieceHits(ix)
	items := func() []Item {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		return ix.items(all, make([]string, len(all))).Items
	}
	for range 2 { // the file's handle maps it at its second read
		if got := items(); len(got) != 400 {
			t.Fatalf("%d items of 400 masked lines", len(got))
		}
	}
	lines := strings.SplitAfter(notes.String(), "\n")
	cut := len(strings.Join(lines[:200], "")) + 3 // 3 bytes into line 200
	must(t, os.Truncate(filepath.Join(root, "episode-1/a/notes.txt"), int64(cut)))
	got := items()
	for _, it := range got {
		if it.Location.Range.Start.Line >= 200 {
			t.Errorf("an item of line %d, cut: %q", it.Location.Range.Start.Line, it.Text)
		}
	}
	if len(got) != 200 {
		t.Errorf("%d items after the cut, want the 200 lines before it", len(got))
	}
}
