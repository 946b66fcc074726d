package runfs

import (
	"testing"

	"runls/retriever/internal/depstest"
)

// TestImports: the run folder's mechanisms know nothing of what is made
// of its files (issue 29's table).
func TestImports(t *testing.T) {
	depstest.Forbid(t, "runls/retriever/internal/bm25", "runls/retriever/internal/corpus", "runls/retriever/internal/records",
		"runls/retriever/internal/persist", "runls/internal/store", "runls/recordformat", "runls/masking")
}
