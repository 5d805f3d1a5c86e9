package doclinks

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// goTestName is a Go test, fuzz target or benchmark as a page cites one.
var goTestName = regexp.MustCompile(`^(Test|Fuzz|Benchmark)[A-Z0-9_][A-Za-z0-9_]*$`)

// CitedTests returns the Go test, fuzz and benchmark names a page cites
// in code spans (`TestX`), each once, in order; a name in plain text or a
// fenced block is not a citation.
func CitedTests(src []byte) []string {
	var out []string
	doc := markdown.Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if cs, ok := n.(*ast.CodeSpan); ok && entering {
			var b strings.Builder
			for c := cs.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
			if name := b.String(); goTestName.MatchString(name) && !slices.Contains(out, name) {
				out = append(out, name)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// declaredTest is the declaration of a test, fuzz target or benchmark.
var declaredTest = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)

// DeclaredTests returns the names of the tests, fuzz targets and
// benchmarks declared in the *_test.go files under root (hidden folders
// and testdata skipped).
func DeclaredTests(root string) (map[string]bool, error) {
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range declaredTest.FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	return names, err
}
