package persist

import (
	"testing"

	"runls/retriever/internal/depstest"
)

// TestImports: the cache entry knows the committed pieces and the store,
// never the run folder on disk or the masking of text (issue 29's table).
func TestImports(t *testing.T) {
	depstest.Forbid(t, "runls/retriever/internal/runfs", "runls/masking")
}
