// Package doclinks checks the relative links of the repository's Markdown
// pages: the README is a short entry that sends readers to one docs/ page
// per topic, so a page renamed or a heading reworded would otherwise leave
// links that lead nowhere, and nothing would say so. It also reads the
// folders a section names (SectionCode, FolderNames) and the repository's
// root folders (RootFolders), so that the README's Layout cannot drift
// from the tree.
//
// Links are read with goldmark (CommonMark plus GitHub's extensions), so a
// link-shaped text inside a code span or a fenced block is not taken for a
// link, and anchors are matched against GitHub's heading slugs.
package doclinks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// markdown parses as GitHub renders: GFM tables, autolinks, strikethrough.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Link is one link or image destination of a page, with the line it is on.
type Link struct {
	Dest string
	Line int
}

// Page is what a Markdown file offers and uses: its heading anchors and
// its links.
type Page struct {
	Anchors map[string]bool
	Links   []Link
}

// Parse reads a page's headings (as GitHub's anchors, a repeated heading
// numbered -1, -2, ...) and its link and image destinations.
func Parse(src []byte) Page {
	p := Page{Anchors: map[string]bool{}}
	seen := map[string]int{}
	doc := markdown.Parser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			slug := Slug(plainText(n, src))
			if k := seen[slug]; k > 0 {
				p.Anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				p.Anchors[slug] = true
			}
			seen[slug]++
		case *ast.Link:
			p.Links = append(p.Links, Link{string(n.Destination), lineOf(src, n.Destination)})
		case *ast.Image:
			p.Links = append(p.Links, Link{string(n.Destination), lineOf(src, n.Destination)})
		}
		return ast.WalkContinue, nil
	})
	return p
}

// plainText is a heading's text as GitHub slugs it: code spans and
// emphasis keep their text, the markup goes.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(plainText(c, src))
		}
	}
	return b.String()
}

// Slug is GitHub's anchor for a heading's text: lower case, letters,
// digits, marks, '_' and '-' kept, each space a '-', everything else
// dropped ("Policy: `call`" -> "policy-call").
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lineOf is the line of the first "(dest" in src: good enough to point a
// reader at a broken link, as goldmark keeps no position for inlines.
func lineOf(src, dest []byte) int {
	i := bytes.Index(src, append([]byte("("), dest...))
	if i < 0 {
		i = bytes.Index(src, dest)
	}
	if i < 0 {
		return 0
	}
	return bytes.Count(src[:i], []byte("\n")) + 1
}

// Check reports each relative link of the page file (a path under root)
// that leads to no file or directory inside root, or to a heading anchor
// its target Markdown page does not have. Links with a scheme (https:,
// mailto:) are not followed.
func Check(root, file string) ([]string, error) {
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	pages := map[string]Page{file: Parse(src)}
	var problems []string
	for _, l := range pages[file].Links {
		if msg := checkLink(root, file, l.Dest, pages); msg != "" {
			problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", file, l.Line, l.Dest, msg))
		}
	}
	return problems, nil
}

// checkLink judges one destination of file; pages caches parsed targets.
func checkLink(root, file, dest string, pages map[string]Page) string {
	u, err := url.Parse(dest)
	if err != nil {
		return "not a valid link: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return ""
	}
	target := file
	if u.Path != "" {
		target = filepath.Join(filepath.Dir(file), filepath.FromSlash(u.Path))
		if strings.HasPrefix(u.Path, "/") {
			target = filepath.FromSlash(strings.TrimPrefix(u.Path, "/"))
		}
		if target == ".." || strings.HasPrefix(target, ".."+string(filepath.Separator)) {
			return "leads outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return "no such file"
		}
	}
	if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	p, ok := pages[target]
	if !ok {
		src, err := os.ReadFile(filepath.Join(root, target))
		if err != nil {
			return "cannot read: " + err.Error()
		}
		p = Parse(src)
		pages[target] = p
	}
	if !p.Anchors[u.Fragment] {
		return fmt.Sprintf("%s has no heading with anchor #%s", filepath.ToSlash(target), u.Fragment)
	}
	return ""
}

// SectionCode returns the code of a page's section: the text of its code
// spans and code blocks and its link destinations, each on a line of its
// own, from the heading whose anchor is slug up to the next heading of the
// same or a higher level. ok is false when the page has no such heading.
// Prose is left out, so that a slash in a sentence ("and/or") is not taken
// for a path.
func SectionCode(src []byte, slug string) (code string, ok bool) {
	doc := markdown.Parser().Parse(text.NewReader(src))
	var b strings.Builder
	level := 0
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, isHeading := n.(*ast.Heading); isHeading {
			if level > 0 && h.Level <= level {
				break
			}
			if level == 0 && Slug(plainText(h, src)) == slug {
				level, ok = h.Level, true
				continue
			}
		}
		if level > 0 {
			writeCode(&b, n, src)
		}
	}
	return b.String(), ok
}

// writeCode writes the code spans, code blocks and link destinations
// under n.
func writeCode(b *strings.Builder, n ast.Node, src []byte) {
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeBlock, *ast.FencedCodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			b.WriteByte('\n')
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			b.WriteString(plainText(n, src))
			b.WriteByte('\n')
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			b.Write(n.Destination)
			b.WriteByte('\n')
		}
		return ast.WalkContinue, nil
	})
}

// folderPath matches the first segment of a path followed by a slash: a
// name not itself preceded by a path's characters, so that "mcpserver/stdio/"
// gives "mcpserver" and not "stdio", and "https://host/x" gives nothing.
var folderPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-/:])([A-Za-z0-9_][A-Za-z0-9_.\-]*)/`)

// FolderNames returns, sorted and once each, the folders that text names
// as the first segment of a path: "mcpserver/", "mcpserver/stdio/" and
// "mcpserver/server.go" all name "mcpserver".
func FolderNames(text string) []string {
	seen := map[string]bool{}
	for _, m := range folderPath.FindAllStringSubmatch(text, -1) {
		seen[m[1]] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// RootFolders returns, sorted, the folders of the repository at root: its
// directories, except hidden ones (.git, .ci, .cache) and those a line of
// root's .gitignore names as a directory ("/dist/", "bin/"), which hold
// what a build or a test run leaves, not the repository's own files.
func RootFolders(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	if gi, err := os.ReadFile(filepath.Join(root, ".gitignore")); err == nil {
		for _, line := range strings.Split(string(gi), "\n") {
			line = strings.TrimSpace(line)
			name, isDir := strings.CutSuffix(strings.TrimPrefix(line, "/"), "/")
			if isDir && name != "" && !strings.ContainsAny(name, "/*?[!#\\") {
				ignored[name] = true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !ignored[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
