package retriever

import (
	"strings"
	"testing"
)

// A line of 50 MB is cut into pieces; it neither crashes nor hides the rest
// of its file.
func TestHugeLine(t *testing.T) {
	size := 50 << 20
	if testing.Short() {
		size = 5 << 20
	}
	word := "lorem ipsum dolor sit amet "
	line := strings.Repeat(word, size/len(word)) + "needle"
	ix := openTest(t, Options{Root: writeRun(t, map[string]string{
		"episode-1/a/big.txt": "before\n" + line + "\nafter haystack\n",
	})})
	items := search(t, ix, Request{Query: "needle haystack", TopK: 10})
	got := sortedTexts(items)
	if len(got) != 2 || got[1] != "after haystack" || !strings.HasSuffix(got[0], "needle") {
		t.Fatalf("got %d items: %.80q", len(got), got)
	}
	for _, it := range items {
		if strings.HasSuffix(it.Text, "needle") {
			r := it.Location.Range
			if r.Start.Line != 1 || r.End.Character != len(line) || r.End.Character-r.Start.Character > MaxPieceChars {
				t.Errorf("range %+v of a line of %d characters", r, len(line))
			}
		}
	}
	f := ix.Footprint()
	if want := int64(len(line)+MaxPieceChars-1)/MaxPieceChars + 2; f.Pieces != want {
		t.Errorf("%d pieces, want %d", f.Pieces, want)
	}
}
