// Package depstest checks the layering of the retriever's internal
// packages: each has a deps_test.go that names what it may not import and
// calls Forbid. It is for tests only.
package depstest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Retriever is the package above every internal one: none may import it.
const Retriever = "runls/retriever"

// Import is one import of a non-test file of a package.
type Import struct {
	File, Path string
}

// Imports returns the imports of the non-test files of the package in the
// current folder, failing t when there is no such file.
func Imports(t *testing.T) []Import {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []Import
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
			out = append(out, Import{File: name, Path: p})
		}
	}
	if checked == 0 {
		t.Fatal("no file checked")
	}
	return out
}

// Forbid fails t when a non-test file of the package in the current folder
// imports one of forbidden, or the retriever, or a package under one of them.
func Forbid(t *testing.T, forbidden ...string) {
	t.Helper()
	for _, imp := range Imports(t) {
		if imp.Path == Retriever {
			t.Errorf("%s imports %s: nothing under retriever/internal imports the retriever", imp.File, imp.Path)
		}
		for _, no := range forbidden {
			if imp.Path == no || strings.HasPrefix(imp.Path, no+"/") {
				t.Errorf("%s imports %s, which this package may not import", imp.File, imp.Path)
			}
		}
	}
}
