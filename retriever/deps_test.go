package retriever

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are the packages of this module and the outside modules
// that retriever's non-test files may import: the engine, the record format
// and masking below it, nothing of the server above it (lsp, cmd, mcpserver,
// go.lsp.dev) and not the run generator, which is for tests and benchmarks.
var allowedImports = map[string]bool{
	"runls/retriever/internal/bm25": true,
	"runls/recordformat":            true,
	"runls/masking":                 true,
	"runls/internal/store":          true, // the persisted index (issue 18)
	"go.uber.org/zap":               true,
	"github.com/fsnotify/fsnotify":  true,
	"golang.org/x/sys/unix":         true, // fstatat with no FileInfo object (folder_linux.go); fsnotify's own dependency
}

// TestImportsDownwardOnly fails when a non-test file imports a package of
// this module or an outside module that the layering does not allow.
func TestImportsDownwardOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if (strings.Contains(first, ".") || first == "runls") && !allowedImports[p] {
				t.Errorf("%s imports %s: retriever uses only the engine, recordformat and masking below it", name, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
}
