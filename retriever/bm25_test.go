package retriever

import (
	"math"
	"testing"
)

// The corpus: three pieces, N = 3, avgdl = 2. Scores computed by hand from the
// formula of spec §6 (k1 = 1.2, b = 0.75, Lucene's idf, the factor k1+1 kept).
func TestBM25HandComputed(t *testing.T) {
	root := writeRun(t, map[string]string{
		"episode-1/a/notes.txt": "apple banana\napple apple cherry\nbanana\n",
	})
	ix := openTest(t, Options{Root: root})
	tests := []struct {
		query  string
		texts  []string
		scores []float64
	}{
		{"apple", []string{"apple apple cherry", "apple banana"}, []float64{0.5665797174469143, 0.47000362924573563}},
		{"Apple CHERRY", []string{"apple apple cherry", "apple banana"}, []float64{1.3808530595698572, 0.47000362924573563}},
		{"apple banana", []string{"apple banana", "banana", "apple apple cherry"}, []float64{0.9400072584914713, 0.47000362924573563 * 2.2 / 1.75, 0.5665797174469143}},
		{"apple apple", []string{"apple apple cherry", "apple banana"}, []float64{0.5665797174469143, 0.47000362924573563}},
		{"durian", nil, nil},
	}
	for _, tt := range tests {
		items := search(t, ix, Request{Query: tt.query, TopK: 10})
		if len(items) != len(tt.texts) {
			t.Fatalf("%q: got %q, want %q", tt.query, texts(items), tt.texts)
		}
		for i, it := range items {
			if it.Text != tt.texts[i] || math.Abs(it.Score-tt.scores[i]) > 1e-12 {
				t.Errorf("%q #%d: got %q %.15f, want %q %.15f", tt.query, i, it.Text, it.Score, tt.texts[i], tt.scores[i])
			}
		}
	}
}

// Statistics are over the agents searched: with an agent, N, avgdl and n(t)
// are that agent's.
func TestBM25StatisticsPerAgent(t *testing.T) {
	root := writeRun(t, map[string]string{
		"episode-1/a/notes.txt": "apple banana\napple apple cherry\nbanana\n",
		"episode-1/b/notes.txt": "apple\napple\napple\napple\n",
	})
	ix := openTest(t, Options{Root: root})
	items := search(t, ix, Request{Query: "apple cherry", Agent: "a", TopK: 10})
	if len(items) != 2 || math.Abs(items[0].Score-1.3808530595698572) > 1e-12 {
		t.Fatalf("agent a: got %+v", items)
	}
	all := search(t, ix, Request{Query: "apple cherry", TopK: 10})
	if all[0].Text != "apple apple cherry" || all[0].Score == items[0].Score {
		t.Fatalf("all agents: statistics should differ: %+v", all[0])
	}
}
