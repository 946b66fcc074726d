package retriever

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"runls/retriever/internal/bm25"
	"runls/retriever/internal/corpus"
)

// Many small updates (appends that leave dead tail pieces behind, a rewrite,
// a deletion) are merged into few segments, and the index still equals one
// built from scratch, pieces and statistics.
func TestMergeKeepsTheIndex(t *testing.T) {
	root := writeRun(t, map[string]string{
		hist:                    rec("c1", "A said: first"),
		note:                    "apple one\n",
		"episode-2/b/b.history": rec("c1", "B said: other"),
		"episode-2/b/gone.txt":  "apple gone\n",
	})
	opts := Options{Root: root, Interpreter: mustRules(t)}
	ix := openTest(t, opts)
	for i := range 3 * mergeSmallAt {
		appendFile(t, root, hist, rec("c1", fmt.Sprintf("A said: apple %d", i))+"  more apple\n")
		appendFile(t, root, note, fmt.Sprintf("apple line %d\n", i))
		if i == mergeSmallAt {
			writeFile(t, root, "episode-2/b/b.history", rec("c2", "B said: rewritten apple"))
		}
		if i == mergeSmallAt+2 {
			must(t, removeFile(root, "episode-2/b/gone.txt"))
		}
		assertFollowed(t, ix, opts, nil)
	}
	if n := len(ix.state.Segments); n >= mergeSmallAt+1 {
		t.Fatalf("%d segments after %d updates: small ones are not merged", n, 3*mergeSmallAt)
	}
	for _, s := range ix.state.Segments {
		if s.DeadCount() != deadCountSlow(s) {
			t.Fatalf("dead count %d, bits say %d", s.DeadCount(), deadCountSlow(s))
		}
	}
	items := search(t, ix, Request{Query: "apple", Episode: "episode-1", Conversation: "c1", TopK: 100})
	if len(items) != 3*mergeSmallAt*2+3 { // said, lines, "more apple" once, "apple one", "rewritten apple"
		t.Fatalf("%d items for apple, want %d: %q", len(items), 3*mergeSmallAt*2+3, texts(items))
	}
}

func deadCountSlow(s *corpus.Segment) int {
	n := 0
	for d := uint32(0); d < uint32(s.Docs()); d++ {
		if s.Dead(d) {
			n++
		}
	}
	return n
}

// mergeSmallAt is how many small segments the engine merges at once.
const mergeSmallAt = bm25.MergeFactor

func removeFile(root, rel string) error {
	return os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
}
