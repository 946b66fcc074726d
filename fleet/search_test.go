package fleet

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"runls/retriever"
)

// TestHolding: the candidates are looked for in the runs whose tallies hold
// a term asked, when they are few; otherwise the scope is left as it was.
func TestHolding(t *testing.T) {
	terms := []string{"deploy", "rare"}
	byRun := map[string][]int64{"r1": {3, 0}, "r2": {0, 2}, "r3": {1, 1}}
	many := map[string][]int64{}
	for i := range 150 {
		many[fmt.Sprintf("r%d", i)] = []int64{1, 0}
	}
	for _, tt := range []struct {
		name  string
		scope Scope
		byRun map[string][]int64
		asked []string
		want  []string
	}{
		{"every term", Scope{}, byRun, terms, []string{"r1", "r2", "r3"}},
		{"the rare one", Scope{}, byRun, []string{"rare"}, []string{"r2", "r3"}},
		{"runs named stay", Scope{Runs: []string{"r1"}}, byRun, terms, []string{"r1"}},
		{"too many runs", Scope{}, many, terms, nil},
		{"no tallies", Scope{}, nil, terms, nil},
	} {
		got := holding(tt.scope, tt.byRun, terms, tt.asked)
		if !reflect.DeepEqual(got.Runs, tt.want) {
			t.Errorf("%s: runs %v, want %v", tt.name, got.Runs, tt.want)
		}
	}
}

// TestSearchEveryRun: a search that names no run looks for its records in
// every run whose tallies hold its terms; two copies of a run hold the same
// texts, each given once (spec §6), from the first run.
func TestSearchEveryRun(t *testing.T) {
	c := startCluster(t)
	st := c.store(t)
	for _, id := range []string{"every-1", "every-2"} {
		shipRun(t, st, "../testdata/sample-run", id, false, "")
	}
	ctx := context.Background()
	terms := []string{"billing", "migration"}
	stats, err := st.Statistics(ctx, StatsQuery{Terms: terms})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.ByRun) != 2 || !reflect.DeepEqual(stats.ByRun["every-1"], stats.ByRun["every-2"]) || stats.ByRun["every-1"][0] == 0 {
		t.Fatalf("the tallies by run: %v", stats.ByRun)
	}
	if got := holding(Scope{}, stats.ByRun, terms, terms); !reflect.DeepEqual(got.Runs, []string{"every-1", "every-2"}) {
		t.Errorf("candidates looked for in %v", got.Runs)
	}
	all, err := (&Searcher{Store: st}).Search(ctx, Request{Request: retriever.Request{Query: "billing migration", TopK: 20}})
	if err != nil {
		t.Fatal(err)
	}
	one, err := (&Searcher{Store: st}).Search(ctx, Request{Request: retriever.Request{Query: "billing migration", TopK: 20}, Runs: []string{"every-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Items) == 0 || len(all.Items) != len(one.Items) {
		t.Fatalf("over every run %d items, over one %d", len(all.Items), len(one.Items))
	}
	for i := range all.Items {
		if all.Items[i].Run != "every-1" || all.Items[i].Text != one.Items[i].Text {
			t.Errorf("item %d: %s %q, want every-1 %q", i, all.Items[i].Run, all.Items[i].Text, one.Items[i].Text)
		}
	}
}
