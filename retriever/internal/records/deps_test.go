package records

import (
	"testing"

	"runls/retriever/internal/depstest"
)

// TestImports: the record tables read no file (not os, not io/fs) and know
// no index, segment, cache, folder or masker (issue 29's table).
func TestImports(t *testing.T) {
	depstest.Forbid(t, "runls/retriever/internal/bm25", "runls/retriever/internal/corpus", "runls/retriever/internal/runfs",
		"runls/retriever/internal/persist", "runls/internal/store", "runls/masking", "os", "io/fs")
}
