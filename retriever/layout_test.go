package retriever

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutNamesEveryFile: DEVELOPERS.md's layout names every non-test
// file of the retriever and of its internal packages under its own
// package's heading (issue 29), so that a file added or moved is written
// into it.
func TestLayoutNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("../DEVELOPERS.md")
	if err != nil {
		t.Skipf("no DEVELOPERS.md beside the module: %v", err)
	}
	sections := layoutSections(t, string(doc))
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
			return err
		}
		pkg := filepath.Base(filepath.Dir(path))
		if pkg == "." {
			pkg = "retriever"
		}
		name := regexp.MustCompile(`(^|[^\w/])` + regexp.QuoteMeta(d.Name()) + `\b`)
		if !name.MatchString(sections[pkg]) {
			t.Errorf("DEVELOPERS.md's layout does not name %s under %s", path, pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// layoutSections cuts the layout's block into the retriever's section and
// each internal package's, by package name.
func layoutSections(t *testing.T, doc string) map[string]string {
	_, block, ok := strings.Cut(doc, "## Layout")
	if ok {
		_, block, ok = strings.Cut(block, "```")
	}
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("DEVELOPERS.md has no layout block")
	}
	heading := regexp.MustCompile(`^(retriever/|  internal/(\w+)/)`)
	sections := map[string]string{}
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			cur = "retriever"
			if m[2] != "" {
				cur = m[2]
			}
		} else if line != "" && line[0] != ' ' {
			cur = ""
		}
		if cur != "" {
			sections[cur] += line + "\n"
		}
	}
	return sections
}
