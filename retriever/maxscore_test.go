package retriever

import (
	"context"
	"math"
	"testing"

	"runls/internal/rungen"
)

// TestMaxScoreEqualsExhaustive checks the pruned search against scoring every
// posting of every query term, on a generated run with the generator's query
// set (frequent, common, middling and rare words).
func TestMaxScoreEqualsExhaustive(t *testing.T) {
	opts := rungen.Options{Bytes: 3 << 20, Seed: 7, Episodes: 4, Agents: 3}
	dir := t.TempDir()
	if _, err := rungen.Generate(context.Background(), dir, opts); err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, Options{Root: dir})
	for _, q := range rungen.Queries(opts, 40) {
		for _, k := range []int{1, 5, 50} {
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

// exhaustive scores every posting of the query's terms with no pruning.
func exhaustive(t *testing.T, ix *Index, req Request) []Item {
	t.Helper()
	ep, _ := EpisodeNumber(req.Episode)
	f := &filter{episode: ep, records: true}
	f.conv, f.hasConv = ix.lookupConv(req.Conversation)
	f.dash, _ = ix.lookupConv("-")
	ix.mu.RLock()
	q, err := ix.newQuery(req.rankingText(), req.Agent)
	if err != nil {
		t.Fatal(err)
	}
	var docs, terms int64
	for _, st := range ix.stats {
		docs += st.docs
		terms += st.terms
	}
	avgdl := float64(terms) / float64(docs)
	top := newTopK(req.TopK)
	for _, s := range ix.segments {
		acc := map[uint32]float64{}
		for _, qt := range q.terms {
			i := s.termIndex(qt.id)
			if i < 0 {
				continue
			}
			it := s.iter(i)
			for it.next() {
				acc[it.doc] += bm25(qt.idf, it.tf, uint32(s.dl[it.doc]), avgdl)
			}
		}
		for d, score := range acc {
			if ok, fs := ix.candidate(s, d, q, f); ok {
				top.offer(hit{score: score, seg: s, doc: d, fs: fs})
			}
		}
	}
	hits := top.sorted()
	agents := make([]string, len(hits))
	for i, h := range hits {
		agents[i] = ix.agents[h.fs.agent]
	}
	ix.mu.RUnlock()
	return ix.items(hits, agents).Items
}
