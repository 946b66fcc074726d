package fleet

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the fleet on the retriever's public API and the
// standard library (and internal/jsonappend, which imports nothing of
// runls): no retriever/internal package (the engine's parts move and
// change), no client library of the store (runls speaks its HTTP API).
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if (first == "runls" && p != "runls/retriever" && p != "runls/internal/jsonappend") || strings.Contains(first, ".") {
				t.Errorf("%s imports %s: the fleet uses the retriever's public API and the standard library only", name, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
}
