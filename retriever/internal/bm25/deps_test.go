package bm25

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// forbiddenImports are the standard packages that reach files: the engine
// reads none, following them is retriever's.
var forbiddenImports = map[string]bool{
	"os": true, "io/fs": true, "path/filepath": true, "syscall": true, "net/url": true,
}

// runWords are the run folder's words: the engine speaks of documents,
// partitions and keys.
var runWords = regexp.MustCompile(`(?i)episode|agent|conversation|told|said|masked|interpreter`)

// TestEngineImportsAndNames fails when a non-test file of the package
// imports anything but the standard library, or a standard package that
// reaches files, or declares an identifier with a run-folder word.
func TestEngineImportsAndNames(t *testing.T) {
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
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") || first == "runls" {
				t.Errorf("%s imports %s: the engine imports the standard library only", name, p)
			}
			if forbiddenImports[p] {
				t.Errorf("%s imports %s: the engine reads no file", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && runWords.MatchString(id.Name) {
				t.Errorf("%s: identifier %s carries a run-folder word", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
}
