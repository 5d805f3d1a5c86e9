package doclinks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/doclinks"
)

// repoRoot is the module root, seen from this package.
const repoRoot = "../.."

// TestRepositoryLinks: every relative link of the README, the top-level
// pages and docs/*.md leads to a file that exists and, into a Markdown
// page, to a heading it has.
func TestRepositoryLinks(t *testing.T) {
	files := []string{"README.md", "CHANGELOG.md", "SECURITY.md"}
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot, d)
		require.NoError(t, err)
		files = append(files, rel)
	}
	for _, f := range files {
		problems, err := doclinks.Check(repoRoot, f)
		require.NoError(t, err)
		for _, p := range problems {
			t.Error(p)
		}
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Human approval (elicitation)":                              "human-approval-elicitation",
		"Policy: capabilities, trust, limits, policy explain, call": "policy-capabilities-trust-limits-policy-explain-call",
		"Sandboxed execution: run_script, run_command":              "sandboxed-execution-run_script-run_command",
		"Artifacts (S3 / MinIO)":                                    "artifacts-s3--minio",
		"Speed: 2 µs":                                               "speed-2-µs",
		"  Déjà vu  ":                                               "déjà-vu",
	} {
		assert.Equal(t, want, doclinks.Slug(heading), heading)
	}
}

func TestParse(t *testing.T) {
	src := "# Top\n\n## Policy: `call`\n\n## Speed\n\n### Speed\n\n" +
		"See [a](a.md#x) and ![i](img.png).\n\n`[not](code.md)` and\n\n```\n[no](fence.md)\n```\n"
	p := doclinks.Parse([]byte(src))
	assert.Equal(t, map[string]bool{"top": true, "policy-call": true, "speed": true, "speed-1": true}, p.Anchors)
	require.Len(t, p.Links, 2)
	assert.Equal(t, doclinks.Link{Dest: "a.md#x", Line: 9}, p.Links[0])
	assert.Equal(t, "img.png", p.Links[1].Dest)
}

// TestCheck: hostile and broken links are each reported with the rule
// they break; good ones are not.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
	}
	write("docs/topic.md", "# Topic\n\n## Speed\n")
	write("configs/x.yaml", "a: 1\n")
	write("README.md", `# Readme

## Tour

- [ok](docs/topic.md) [ok](docs/topic.md#speed) [ok](#tour) [ok](configs/) [ok](configs/x.yaml#L1)
- [ok](https://example.com/missing.md#nowhere) [ok](mailto:a@b.c) [ok](/docs/topic.md#topic)
- [bad](docs/gone.md)
- [bad](docs/topic.md#policy)
- [bad](#gone)
- [bad](../outside.md)
`)
	problems, err := doclinks.Check(root, "README.md")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"README.md:7: docs/gone.md: no such file",
		"README.md:8: docs/topic.md#policy: docs/topic.md has no heading with anchor #policy",
		"README.md:9: #gone: README.md has no heading with anchor #gone",
		"README.md:10: ../outside.md: leads outside the repository",
	}, problems)

	// From inside docs/, README anchors are ../README.md#...
	write("docs/other.md", "[ok](../README.md#tour) [ok](topic.md) [bad](../README.md#speed) [bad](docs/topic.md)\n")
	problems, err = doclinks.Check(root, "docs/other.md")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"docs/other.md:1: ../README.md#speed: README.md has no heading with anchor #speed",
		"docs/other.md:1: docs/topic.md: no such file",
	}, problems)
}

// TestReadmeLayoutNamesEveryRootFolder: the README's Layout section names
// every root folder of the repository (as the first segment of a path in
// its code: "guard/", "mcpserver/stdio/"), and names no folder that is not
// there, so that a folder added, moved or removed shows up in the page a
// newcomer reads first.
func TestReadmeLayoutNamesEveryRootFolder(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	code, ok := doclinks.SectionCode(src, "layout")
	require.True(t, ok, "README.md has no Layout section (## Layout)")
	named := doclinks.FolderNames(code)
	folders, err := doclinks.RootFolders(repoRoot)
	require.NoError(t, err)
	require.NotEmpty(t, folders)
	for _, f := range folders {
		if !slices.Contains(named, f) {
			t.Errorf("README.md's Layout section does not name the root folder %s/: add a line for it", f)
		}
	}
	for _, n := range named {
		if !slices.Contains(folders, n) {
			t.Errorf("README.md's Layout section names %s/, which is not a root folder of the repository", n)
		}
	}
}

func TestSectionCode(t *testing.T) {
	src := "# Top\n\n`top/`\n\n## Layout\n\nThe and/or prose, `guard/` and [a](docs/a.md).\n\n" +
		"    cmd/x/   the binary\n    tools/fs/\n\n### Below\n\n```\nsandbox/\n```\n\n## Next\n\n`next/`\n"
	code, ok := doclinks.SectionCode([]byte(src), "layout")
	require.True(t, ok)
	assert.Equal(t, "guard/\ndocs/a.md\ncmd/x/   the binary\ntools/fs/\n\nsandbox/\n\n", code)
	assert.Equal(t, []string{"cmd", "docs", "guard", "sandbox", "tools"}, doclinks.FolderNames(code))

	_, ok = doclinks.SectionCode([]byte(src), "gone")
	assert.False(t, ok)
}

func TestFolderNames(t *testing.T) {
	for text, want := range map[string][]string{
		"mcpserver/ mcpserver/stdio/ mcpserver/server.go": {"mcpserver"},
		"(docs/a.md) `e2e/` x/y/z":                        {"docs", "e2e", "x"},
		"https://github.com/a/b and ../up/x and ./here/":  nil,
		"tools.d/*.yaml, _x/":                             {"_x", "tools.d"},
		"no slash here":                                   nil,
	} {
		got := doclinks.FolderNames(text)
		if want == nil {
			assert.Empty(t, got, text)
			continue
		}
		assert.Equal(t, want, got, text)
	}
}

func TestRootFolders(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"guard", "tools", ".git", ".cache", "dist", "bin", "keep"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "README.md"), nil, 0o644))
	got, err := doclinks.RootFolders(root)
	require.NoError(t, err)
	assert.Equal(t, []string{"bin", "dist", "guard", "keep", "tools"}, got, "without a .gitignore")

	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"),
		[]byte(".cache/\n/bin/\n/dist/\n*.test\n/toolwarden\nkeep/*/\n"), 0o644))
	got, err = doclinks.RootFolders(root)
	require.NoError(t, err)
	assert.Equal(t, []string{"guard", "keep", "tools"}, got)
}

// TestSecurityPageNamesRealTests: every test docs/security.md cites as
// proof of a control exists in the tree, and the page covers each of the
// NSA's nine controls and each OWASP MCP Top 10 item.
func TestSecurityPageNamesRealTests(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "docs", "security.md"))
	require.NoError(t, err)
	cited := doclinks.CitedTests(src)
	require.GreaterOrEqual(t, len(cited), 60, "the page cites its proofs")
	declared, err := doclinks.DeclaredTests(repoRoot)
	require.NoError(t, err)
	for _, name := range cited {
		assert.True(t, declared[name], "docs/security.md cites %s, which no *_test.go declares", name)
	}
	page := string(src)
	for i := 1; i <= 9; i++ {
		assert.Contains(t, page, fmt.Sprintf("\n### %d. ", i), "NSA control %d", i)
	}
	for i := 1; i <= 10; i++ {
		assert.Contains(t, page, fmt.Sprintf("\n| MCP%02d ", i), "OWASP MCP%02d", i)
	}
}

// TestCitedTests: only code spans cite, each name once; a cited name no
// test declares is what the page check reports.
func TestCitedTests(t *testing.T) {
	src := []byte("Proof: `TestA`, `TestB` and `TestA` again; `FuzzC`, `BenchmarkD`.\n\n" +
		"Not cited: TestE in prose, `Testing`, `TestF(t)`, `go test -run TestG`.\n\n```\nTestH\n```\n")
	require.Equal(t, []string{"TestA", "TestB", "FuzzC", "BenchmarkD"}, doclinks.CitedTests(src))

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pkg", "testdata"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pkg", "a_test.go"), []byte("package pkg\n\nfunc TestA(t *testing.T) {}\nfunc FuzzC(f *testing.F) {}\n// func TestB(t *testing.T) {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pkg", "testdata", "x_test.go"), []byte("func TestB(t *testing.T) {}\n"), 0o644))
	declared, err := doclinks.DeclaredTests(dir)
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"TestA": true, "FuzzC": true}, declared)
}
