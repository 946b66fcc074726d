package retriever

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runls/internal/rungen"
	"runls/retriever/internal/bm25"
)

// pathTunings make the search take each of its ways: the default, lists
// split at a few postings with neither prefill nor the all-postings merge
// (MaxScore, champions, single), everything prefilled or merged, every
// segment merged, and no split lists with little prefill. All but the default
// search the segments in two halves side by side (parallelMin 0).
var pathTunings = []struct {
	name string
	tune bm25.Tuning
}{
	{"default", bm25.DefaultTuning()},
	{"split-maxscore", bm25.Tuning{LayerMin: 64, ExhaustiveMax: 0, PrefillMax: 0}},
	{"split-prefill-merge", bm25.Tuning{LayerMin: 64, ExhaustiveMax: 1 << 20, ExhaustiveSpread: 8, PrefillMax: 1 << 20}},
	{"merge-all", bm25.Tuning{LayerMin: 64, ExhaustiveMax: math.MaxInt, ExhaustiveSpread: 1 << 40, PrefillMax: 0}},
	{"unsplit-little-prefill", bm25.Tuning{LayerMin: math.MaxInt, ExhaustiveMax: 0, PrefillMax: 1 << 10}},
}

// TestMaxScoreEqualsExhaustive checks the pruned search against scoring every
// posting of every query term, on a generated run with the generator's query
// set (frequent, common, middling and rare words), every way of searching.
func TestMaxScoreEqualsExhaustive(t *testing.T) {
	opts := rungen.Options{Bytes: 3 << 20, Seed: 7, Episodes: 4, Agents: 3}
	dir := t.TempDir()
	if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	for _, tc := range pathTunings {
		t.Run(tc.name, func(t *testing.T) {
			ix := openTest(t, Options{Root: dir})
			ix.searcher.Tuning = tc.tune
			queries := rungen.Queries(opts, 40)
			// Long queries too: more terms than the all-postings merge takes.
			queries = append(queries, strings.Join(queries[:12], " "), strings.Join(queries[20:32], " "))
			checkAgainstExhaustive(t, ix, queries, []int{1, 5, 50})
		})
	}
}

// TestMaxScoreEqualsExhaustiveGrowing checks the same while the run grows:
// many small segments, merged ones, and pieces left dead by pending tails.
func TestMaxScoreEqualsExhaustiveGrowing(t *testing.T) {
	opts := rungen.Options{Bytes: 1 << 20, Seed: 11, Episodes: 3, Agents: 2}
	queries := rungen.Queries(opts, 24)
	for _, tc := range pathTunings {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
				t.Fatal(err)
			}
			ix := openTest(t, Options{Root: dir})
			ix.searcher.Tuning = tc.tune
			app := rungen.NewAppender(opts)
			agents := rungen.AgentNames(opts.Agents)
			most := 0 // segments at a check
			for round := range 12 {
				for _, a := range agents {
					for _, name := range []string{a + ".history", a + ".log", "notes.md"} {
						if _, err := app.Append(filepath.Join(dir, "episode-3", a, name), 5+round*7); err != nil {
							t.Fatal(err)
						}
					}
				}
				if round%4 == 1 {
					// A file written anew: its pieces leave the index whole.
					a := agents[round%len(agents)]
					path := filepath.Join(dir, "episode-2", a, a+".log")
					if err := os.WriteFile(path, nil, 0o644); err != nil {
						t.Fatal(err)
					}
					if _, err := app.Append(path, 3+round); err != nil {
						t.Fatal(err)
					}
				}
				if round%3 == 2 {
					checkAgainstExhaustive(t, ix, queries, []int{3, 44})
					checkAgainstFresh(t, ix, dir, tc.tune, queries)
					most = max(most, len(ix.state.Segments))
				} else if _, err := ix.Refresh(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			}
			if most < 3 {
				t.Fatalf("at most %d segments searched: the test means to search many", most)
			}
		})
	}
}

// checkAgainstFresh checks that a grown index answers as one opened on the
// run as it is now: its statistics (document frequencies, lengths) kept
// right through appends, rewrites and merges.
func checkAgainstFresh(t *testing.T, ix *Index, dir string, tune bm25.Tuning, queries []string) {
	t.Helper()
	fresh := openTest(t, Options{Root: dir})
	fresh.searcher.Tuning = tune
	for _, q := range queries {
		req := Request{Query: q, Episode: "episode-3", Conversation: "conv-1", TopK: 20}
		got, want := search(t, ix, req), search(t, fresh, req)
		if len(got) != len(want) {
			t.Fatalf("%q: %d items, fresh index %d", q, len(got), len(want))
		}
		for i := range got {
			if got[i].Location != want[i].Location || got[i].Score != want[i].Score {
				t.Fatalf("%q #%d: got %+v %v, fresh index %+v %v", q, i, got[i].Location, got[i].Score, want[i].Location, want[i].Score)
			}
		}
	}
	fresh.Close()
}

func checkAgainstExhaustive(t *testing.T, ix *Index, queries []string, ks []int) {
	t.Helper()
	for _, q := range queries {
		for _, k := range ks {
			req := Request{Query: q, Episode: "episode-3", Conversation: "conv-1", TopK: k}
			got := search(t, ix, req)
			want := exhaustive(t, ix, req)
			if len(got) != len(want) {
				t.Fatalf("%q k=%d: %d items, exhaustive %d", q, k, len(got), len(want))
			}
			for i := range got {
				if got[i].Location != want[i].Location || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
					t.Fatalf("%q k=%d #%d: got %+v %v, exhaustive %+v %v", q, k, i, got[i].Location, got[i].Score, want[i].Location, want[i].Score)
				}
			}
		}
	}
}

// exhaustive scores every posting of the query's terms with no pruning
// (bruteHits), and keeps the best k pieces that are evidence, each text once.
func exhaustive(t *testing.T, ix *Index, req Request) []Item {
	t.Helper()
	f := newFilter(&ix.state, ix.interpreter, req)
	evidence := func(h hit) bool { return (&evidenceFilter{ix: ix, f: f}).evidence(h.seg, h.doc, h.fs) }
	return bruteItems(ix, bruteTop(bruteHits(t, ix, req), req.TopK, evidence))
}
