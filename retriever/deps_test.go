package retriever

import (
	"strings"
	"testing"

	"runls/retriever/internal/depstest"
)

// allowedImports are the packages of this module and the outside modules
// that retriever's non-test files may import: the engine, the record format
// and masking below it, nothing of the server above it (lsp, cmd, mcpserver,
// go.lsp.dev) and not the run generator, which is for tests and benchmarks.
var allowedImports = map[string]bool{
	"runls/retriever/internal/bm25":    true,
	"runls/retriever/internal/records": true, // issue 29: the record tables and their views
	"runls/retriever/internal/runfs":   true, // issue 29: the run folder on disk
	"runls/retriever/internal/corpus":  true, // issue 29: the committed pieces
	"runls/retriever/internal/persist": true, // issue 29: the cache entry
	"runls/recordformat":               true,
	"runls/masking":                    true,
	"runls/internal/store":             true, // the persisted index (issue 18)
	"runls/internal/jsonappend":        true, // run/failures' JSON, appended
	"go.uber.org/zap":                  true,
	"github.com/fsnotify/fsnotify":     true,
	"golang.org/x/sys/unix":            true, // fstatat with no FileInfo object (folder_linux.go); fsnotify's own dependency
}

// TestImportsDownwardOnly fails when a non-test file imports a package of
// this module or an outside module that the layering does not allow.
func TestImportsDownwardOnly(t *testing.T) {
	for _, imp := range depstest.Imports(t) {
		first, _, _ := strings.Cut(imp.Path, "/")
		if (strings.Contains(first, ".") || first == "runls") && !allowedImports[imp.Path] {
			t.Errorf("%s imports %s: retriever uses only the engine, recordformat and masking below it", imp.File, imp.Path)
		}
	}
}
