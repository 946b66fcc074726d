package retriever

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"runls/retriever/internal/bm25"
)

// setMatches gives each item what matchRanges gives its text alone, [] (not
// nil) where none, and no item's ranges run into the next one's when
// appended to: for texts of ASCII, non-ASCII and long terms, with queries
// of one to many terms (a term of 64 bytes or more too).
func TestSetMatchesEqualsMatchRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 7))
	words := []string{"deploy", "Deploy", "DEPLOY", "café", "Café", "über", "x", "42", "a𝒳b", "ΣΊΣΥΦΟΣ", strings.Repeat("long", 17), strings.Repeat("Long", 17) + "er", "zebra"}
	seps := []string{" ", ".", "(", " — ", "\t", "😀", "\xff"}
	for round := range 300 {
		var q []string
		for range 1 + r.IntN(4+round%20) {
			q = append(q, words[r.IntN(len(words))])
		}
		query := strings.Join(q, " ")
		items := make([]Item, r.IntN(12))
		for i := range items {
			var sb strings.Builder
			for range r.IntN(15) {
				sb.WriteString(words[r.IntN(len(words))])
				sb.WriteString(seps[r.IntN(len(seps))])
			}
			items[i].Text = sb.String()
		}
		setMatches(items, query)
		terms := map[string]bool{}
		for _, term := range bm25.Terms(query) {
			terms[term] = true
		}
		for i, it := range items {
			want := matchRanges(it.Text, terms)
			if it.Matches == nil || !reflect.DeepEqual(it.Matches, want) {
				t.Fatalf("query %q, item %d %q: matches %#v, want %#v", query, i, it.Text, it.Matches, want)
			}
		}
		for i := range items {
			items[i].Matches = append(items[i].Matches, [2]int{-1, -1})
		}
		for i, it := range items {
			if want := matchRanges(it.Text, terms); !reflect.DeepEqual(it.Matches[:len(it.Matches)-1], want) {
				t.Fatalf("query %q, item %d: an append to another item's matches changed them: %v", query, i, it.Matches)
			}
		}
	}
}
