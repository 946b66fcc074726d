package retriever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"runls/internal/store"
	"runls/retriever/internal/corpus"
	"runls/retriever/internal/runfs"
)

// writeRun writes files (slash paths relative to a new run folder) and returns the folder.
func writeRun(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func openTest(t testing.TB, opts Options) *Index {
	t.Helper()
	ix, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func search(t testing.TB, ix *Index, req Request) []Item {
	t.Helper()
	return searchResult(t, ix, req).Items
}

// searchResult is the whole result of req (hidden and notices with the items).
func searchResult(t testing.TB, ix *Index, req Request) Result {
	t.Helper()
	res, err := ix.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %+v: %v", req, err)
	}
	return res
}

func texts(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Text
	}
	return out
}

func sortedTexts(items []Item) []string {
	out := texts(items)
	slices.Sort(out)
	return out
}

// allEvidence is a request that makes every file evidence: records of an
// episode that is not the current one count whatever their conversation.
func allEvidence(query string) Request {
	return Request{Query: query, Episode: "episode-999999", Conversation: "none", TopK: MaxTopK}
}

// livePieces lists every live piece of the index as "rel:line:col reading text"
// (col: byte column; conversation appended when there is one), sorted.
func livePieces(t testing.TB, ix *Index) []string {
	t.Helper()
	return listPieces(ix, func(msg string) { t.Helper(); t.Error(msg) })
}

// listPieces lists the live pieces as livePieces does, telling problems to
// fail (an index being updated by a watcher may point at a file that just
// changed: pieces whose text cannot be read back are then left out).
func listPieces(ix *Index, fail func(string)) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []string
	files := map[string][]string{} // lines of the files, read once
	for _, s := range ix.state.Segments {
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.Dead(d) {
				continue
			}
			fs := ix.state.ByID[s.FileOf(d)]
			if fs == nil {
				fail(fmt.Sprintf("live piece %d of a removed file %d", d, s.FileOf(d)))
				continue
			}
			if ix.state.Files[fs.Rel] != fs {
				fail(fmt.Sprintf("live piece of %s points to a replaced version of it", fs.Rel))
			}
			text, ok := s.Masked.Get(d)
			if !ok {
				lines, ok := files[fs.Rel]
				if !ok {
					data, err := os.ReadFile(runfs.Abs(ix.root, fs.Rel))
					if err != nil {
						fail(fmt.Sprintf("%s: cannot read the file back: %v", fs.Rel, err))
					}
					lines = strings.Split(string(data), "\n")
					files[fs.Rel] = lines
				}
				end := int(s.StartOf(d) + s.BlenOf(d))
				if int(s.LineOf(d)) >= len(lines) || len(lines[s.LineOf(d)]) < end {
					fail(fmt.Sprintf("%s:%d: the piece is not in the file", fs.Rel, s.LineOf(d)))
					continue
				}
				text = lines[s.LineOf(d)][s.StartOf(d):end]
			}
			p := fmt.Sprintf("%s:%d:%d %s %s", fs.Rel, s.LineOf(d), s.StartOf(d), readingOfFlag[s.Flags[d]&corpus.FlagReadingMask], text)
			if c := s.ConvOf(d); c != 0 {
				p += " [" + ix.state.Convs.Name(c) + "]"
			}
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// indexStats are an index's statistics by agent name and term text.
type indexStats map[string]struct {
	docs, terms int64
	df          map[string]int64
}

// checkStats recomputes each agent's statistics from the live pieces and
// compares them with what the index keeps; it returns them.
func checkStats(t testing.TB, ix *Index) indexStats {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	names := ix.state.Dict.Terms()
	type acc struct {
		docs, terms int64
		df          map[uint32]int64
	}
	got := make([]acc, ix.state.Stats.Parts())
	for a := range got {
		got[a].df = map[uint32]int64{}
	}
	for _, s := range ix.state.Segments {
		for d := uint32(0); d < uint32(s.Docs()); d++ {
			if s.Dead(d) {
				continue
			}
			a := ix.state.ByID[s.FileOf(d)].Agent
			got[a].docs++
			got[a].terms += int64(s.Len(d))
		}
		for _, term := range s.Terms() {
			s.EachPosting(term, func(doc, _ uint32) {
				if !s.Dead(doc) {
					got[ix.state.ByID[s.FileOf(doc)].Agent].df[term]++
				}
			})
		}
	}
	out := indexStats{}
	for a := range ix.state.Stats.Parts() {
		var st struct {
			docs, terms int64
			df          []uint32
		}
		st.docs, st.terms, st.df = ix.state.Stats.Part(a)
		name := ix.state.Agents[a]
		if got[a].docs != st.docs || got[a].terms != st.terms {
			t.Errorf("agent %s: index says %d pieces, %d terms; live pieces have %d, %d", name, st.docs, st.terms, got[a].docs, got[a].terms)
		}
		e := struct {
			docs, terms int64
			df          map[string]int64
		}{st.docs, st.terms, map[string]int64{}}
		for id, n := range st.df {
			if int64(n) != got[a].df[uint32(id)] {
				t.Errorf("agent %s term %q: index says df %d; live pieces have %d", name, names[id], n, got[a].df[uint32(id)])
			}
			if n > 0 {
				e.df[names[id]] = int64(n)
			}
		}
		for id, n := range got[a].df {
			if int(id) >= len(st.df) && n > 0 {
				t.Errorf("agent %s term %q: no df kept; live pieces have %d", name, names[id], n)
			}
		}
		if e.docs > 0 {
			out[name] = e
		}
	}
	return out
}

// assertFollowed searches (which brings the index up to date), then checks
// that the index holds exactly want (nil: skip that check), that its
// statistics are those of its live pieces, and that it equals an index built
// from scratch on the same files.
func assertFollowed(t *testing.T, ix *Index, opts Options, want []string) {
	t.Helper()
	search(t, ix, allEvidence("x"))
	got := livePieces(t, ix)
	if want != nil {
		w := slices.Sorted(slices.Values(want))
		if !slices.Equal(got, w) {
			t.Fatalf("pieces after the change:\n got  %q\n want %q", got, w)
		}
	}
	gotStats := checkStats(t, ix)
	opts.Root = ix.Root()
	opts.Logger = nil
	scratch := openTest(t, opts)
	if _, err := scratch.Refresh(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	fresh := livePieces(t, scratch)
	if !slices.Equal(got, fresh) {
		t.Fatalf("followed index differs from one built from scratch:\n followed %q\n scratch  %q", got, fresh)
	}
	freshStats := checkStats(t, scratch)
	if fmt.Sprint(gotStats) != fmt.Sprint(freshStats) {
		t.Fatalf("statistics differ from an index built from scratch:\n followed %v\n scratch  %v", gotStats, freshStats)
	}
	// The same state kept in a cache entry and reopened from it (issue
	// 18): the reopen's update on top of it gives the same index again.
	cache, err := store.OpenRoot(filepath.Join(t.TempDir(), "cache"))
	must(t, err)
	saveIndex(t, ix, opts, cache)
	back, restored := reopened(t, opts, cache)
	if !restored {
		t.Fatal("the saved state was not restored")
	}
	if again := livePieces(t, back); !slices.Equal(again, fresh) {
		t.Fatalf("reopened index differs from one built from scratch:\n reopened %q\n scratch  %q", again, fresh)
	}
	if again := checkStats(t, back); fmt.Sprint(again) != fmt.Sprint(freshStats) {
		t.Fatalf("statistics of the reopened index differ:\n reopened %v\n scratch  %v", again, freshStats)
	}
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
}

func appendFile(t testing.TB, root, rel, content string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(rel)), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(content)
	must(t, err)
	must(t, f.Close())
}

// rec writes a fielded history record line.
func rec(conv, text string) string {
	return "2026-10-21 18:00:00 [running] [" + conv + "] " + text + "\n"
}

// bigNotes returns at least n bytes of distinct note lines.
func bigNotes(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "apple note %d of %d\n", i%97, i%13)
	}
	return sb.String()
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
