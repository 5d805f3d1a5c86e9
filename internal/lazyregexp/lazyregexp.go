// Package lazyregexp holds regular expressions compiled at their first
// use rather than at start-up, as Go's own internal/lazyregexp does for
// the go command.
//
// A package-level regexp.MustCompile runs in the package's init, in every
// process that links the package, whether or not it ever matches: the
// configs validators alone compile ~20 bounded repetitions
// (`[a-z0-9_]{0,63}` is 63 nested instructions) into ~1 MB of heap, paid
// by `toolwarden version` as much as by `serve`. Under `go test` (a
// binary whose name ends in .test) an expression is compiled when it is
// declared, so a bad pattern still fails every test of its package.
package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Regexp is a regexp.Regexp compiled at first use; safe for concurrent use.
type Regexp struct {
	expr string
	re   func() *regexp.Regexp
}

// inTest reports whether this process is a test binary.
var inTest = len(os.Args) > 0 && strings.HasSuffix(strings.TrimSuffix(os.Args[0], ".exe"), ".test")

// New returns expr, to be compiled (regexp.MustCompile: it panics if expr
// does not parse) when first used.
func New(expr string) *Regexp {
	r := newLazy(expr)
	if inTest {
		r.re()
	}
	return r
}

// newLazy is New without the compilation under test.
func newLazy(expr string) *Regexp {
	return &Regexp{expr: expr, re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// Regexp returns the compiled expression, compiling it on the first call.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.re().FindAllStringSubmatchIndex(s, n)
}

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }
