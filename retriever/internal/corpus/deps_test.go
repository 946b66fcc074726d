package corpus

import (
	"testing"

	"runls/retriever/internal/depstest"
)

// TestImports: the committed pieces read no file and call no cache (issue
// 29's table).
func TestImports(t *testing.T) {
	depstest.Forbid(t, "runls/retriever/internal/runfs", "runls/retriever/internal/persist", "runls/internal/store",
		"runls/masking", "os")
}
