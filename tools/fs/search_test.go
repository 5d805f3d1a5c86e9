package fs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/fs"
)

func TestSearchFiles(t *testing.T) {
	f := newFixture(t)
	f.write("main.go", "package main\n")
	f.write("pkg/x.go", "package pkg\n")
	f.write("pkg/sub/y.go", "package sub\n")
	f.write("pkg/readme.md", "# pkg\n")
	f.write(".github/ci.yml", "on: push\n")
	f.write("pkg/"+tempName+".go", "half")
	require.NoError(t, writeOutside(f, "evil.go", "package evil\n"))
	f.symlink("../outside", "out")
	f.symlink("pkg", "alias")

	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"recursive", map[string]any{"pattern": "**/*.go"}, []string{"main.go", "pkg/sub/y.go", "pkg/x.go"}},
		{"one level", map[string]any{"pattern": "*.go"}, []string{"main.go"}},
		{"under a path", map[string]any{"path": "pkg", "pattern": "*.go"}, []string{"pkg/x.go"}},
		{"under a path recursive", map[string]any{"path": "pkg", "pattern": "**/*.go"}, []string{"pkg/sub/y.go", "pkg/x.go"}},
		{"alternatives", map[string]any{"pattern": "**/*.{md,yml}"}, []string{".github/ci.yml", "pkg/readme.md"}},
		{"directories match too", map[string]any{"pattern": "pkg/*"}, []string{"pkg/readme.md", "pkg/sub", "pkg/x.go"}},
		{"case-sensitive", map[string]any{"pattern": "**/*.GO"}, []string{}},
		{"symlinks are not followed", map[string]any{"pattern": "out/*"}, []string{}},
		{"** does not enter symlinked directories", map[string]any{"pattern": "**/y.go"}, []string{"pkg/sub/y.go"}},
		{"a symlinked directory inside named literally is entered", map[string]any{"pattern": "alias/**/*.go"}, []string{"alias/sub/y.go", "alias/x.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			got := callOK[fs.SearchOut](f, "search_files", tt.args)
			require.ElementsMatch(t, tt.want, got.Matches)
			require.False(t, got.Truncated)
		})
	}

	for _, tt := range []struct {
		name string
		args map[string]any
		code toolerr.Code
	}{
		{"absolute pattern", map[string]any{"pattern": "/etc/*"}, toolerr.PathOutsideWorkspace},
		{"dotdot pattern", map[string]any{"pattern": "../*"}, toolerr.PathOutsideWorkspace},
		{"dotdot inside pattern", map[string]any{"pattern": "pkg/../../outside/*"}, toolerr.PathOutsideWorkspace},
		{"bare dotdot", map[string]any{"pattern": ".."}, toolerr.PathOutsideWorkspace},
		{"backslash pattern", map[string]any{"pattern": "..\\*"}, toolerr.PathOutsideWorkspace},
		{"malformed", map[string]any{"pattern": "[a-"}, toolerr.InvalidArgument},
		{"empty", map[string]any{"pattern": ""}, toolerr.InvalidArgument},
		{"too long", map[string]any{"pattern": strings.Repeat("a", 1025)}, toolerr.InvalidArgument},
		{"path outside", map[string]any{"path": "..", "pattern": "*"}, toolerr.PathOutsideWorkspace},
		{"path through escaping link", map[string]any{"path": "out", "pattern": "*"}, toolerr.PathSymlinkEscape},
		{"path missing", map[string]any{"path": "nope", "pattern": "*"}, toolerr.NotFound},
		{"path is a file", map[string]any{"path": "main.go", "pattern": "*"}, toolerr.NotADirectory},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			callErr(f, "search_files", tt.args, tt.code)
		})
	}

	// A ".." hidden in an alternative passes the pattern check, but the
	// workspace file system refuses the path: only the inside branch matches.
	for _, pattern := range []string{"{..,pkg}/*.go", "{../outside,pkg}/*.go", "pkg/{..,.}/*.go"} {
		t.Run("braces "+pattern, func(t *testing.T) {
			f := f.on(t)
			res := f.call("search_files", map[string]any{"pattern": pattern})
			if res.IsError {
				require.Equal(t, toolerr.PathOutsideWorkspace, resultError(t, res).Code)
				return
			}
			got := callOK[fs.SearchOut](f, "search_files", map[string]any{"pattern": pattern})
			for _, m := range got.Matches {
				require.True(t, strings.HasPrefix(m, "pkg/"), "match %q is not under pkg", m)
				require.NotContains(t, m, "evil")
			}
		})
	}
}

func TestSearchFilesCap(t *testing.T) {
	f := newFixture(t)
	for i := range 7 {
		f.write(fmt.Sprintf("d/f%d.go", i), "x")
	}
	got := callOK[fs.SearchOut](f, "search_files", map[string]any{"pattern": "**/*.go"})
	require.Len(t, got.Matches, 5)
	require.True(t, got.Truncated)

	got = callOK[fs.SearchOut](f, "search_files", map[string]any{"pattern": "d/f[0-4].go"})
	require.Len(t, got.Matches, 5)
	require.False(t, got.Truncated, "exactly the cap is not truncated")
}

func TestGrepFiles(t *testing.T) {
	limits := smallLimits()
	limits.MaxGrepMatches = 10
	f := newFixtureWith(t, limits)
	f.write("a.go", "package a\nfunc  Main() {}\n// TODO fix\n")
	f.write("b.txt", "todo later\nTODO now\n")
	f.write("sub/c.go", "TODO sub\n")
	f.write(".env", "TODO dotfile\n")
	f.write(".config/app.yml", "TODO config\n")
	f.write("bin.dat", "TODO\x00binary\n")
	f.write("big.txt", "TODO\n"+strings.Repeat("x", 1100))
	f.write(".git/HEAD", "TODO in git\n")
	f.write(tempName, "TODO half-written\n")
	f.write("long.txt", strings.Repeat("é", 300)+" TODO\n") // 606 bytes
	f.symlink("../outside/secret.txt", "out_file")
	f.symlink("../outside", "out_dir")
	f.symlink("a.go", "alias.go")

	type m struct {
		path string
		line int
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    []m
		scanned int
		skipped int
	}{
		{"literal", map[string]any{"pattern": "TODO"},
			[]m{{".config/app.yml", 1}, {".env", 1}, {"a.go", 3}, {"b.txt", 2}, {"long.txt", 1}, {"sub/c.go", 1}}, 6, 2},
		{"regex", map[string]any{"pattern": `func\s+Main`}, []m{{"a.go", 2}}, 6, 2},
		{"case insensitive", map[string]any{"pattern": "TODO L", "case_insensitive": true}, []m{{"b.txt", 1}}, 6, 2},
		{"case sensitive by default", map[string]any{"pattern": "TODO L"}, []m{}, 6, 2},
		{"case sensitive excludes", map[string]any{"pattern": "Todo"}, []m{}, 6, 2},
		{"include glob", map[string]any{"pattern": "TODO", "include": "**/*.go"}, []m{{"a.go", 3}, {"sub/c.go", 1}}, 2, 0},
		{"include one level", map[string]any{"pattern": "TODO", "include": "*.go"}, []m{{"a.go", 3}}, 1, 0},
		{"include a dotfile at the root", map[string]any{"pattern": "TODO", "include": ".env"}, []m{{".env", 1}}, 1, 0},
		{"include a dot directory", map[string]any{"pattern": "TODO", "include": ".config/**"}, []m{{".config/app.yml", 1}}, 1, 0},
		{"include under a path", map[string]any{"path": "sub", "pattern": "TODO", "include": "*.go"}, []m{{"sub/c.go", 1}}, 1, 0},
		{"single file", map[string]any{"path": "b.txt", "pattern": "TODO"}, []m{{"b.txt", 2}}, 1, 0},
		{"single file with include", map[string]any{"path": "b.txt", "pattern": "TODO", "include": "*.txt"}, []m{{"b.txt", 2}}, 1, 0},
		{"binary and big files are skipped", map[string]any{"pattern": "binary|x{100}"}, []m{}, 6, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			got := callOK[fs.GrepOut](f, "grep_files", tt.args)
			var gotM []m
			for _, x := range got.Matches {
				gotM = append(gotM, m{x.Path, x.Line})
			}
			if len(tt.want) == 0 {
				require.Empty(t, gotM)
			} else {
				require.Equal(t, tt.want, gotM)
			}
			require.Equal(t, tt.scanned, got.FilesScanned, "files scanned")
			require.Equal(t, tt.skipped, got.FilesSkipped, "files skipped")
			require.False(t, got.Truncated)
			for _, x := range got.Matches {
				require.NotContains(t, x.Text, "outside secret")
				require.NotContains(t, x.Text, "in git")
				require.NotContains(t, x.Text, "half-written")
			}
		})
	}
	t.Run("match text is cut at 500 bytes on a rune boundary", func(t *testing.T) {
		f := f.on(t)
		got := callOK[fs.GrepOut](f, "grep_files", map[string]any{"path": "long.txt", "pattern": "TODO"})
		require.Len(t, got.Matches, 1)
		require.Equal(t, strings.Repeat("é", 250), got.Matches[0].Text)
	})

	for _, tt := range []struct {
		name string
		args map[string]any
		code toolerr.Code
	}{
		{"bad regex", map[string]any{"pattern": "("}, toolerr.InvalidArgument},
		{"backreference", map[string]any{"pattern": `(a)\1`}, toolerr.InvalidArgument},
		{"lookahead", map[string]any{"pattern": `a(?=b)`}, toolerr.InvalidArgument},
		{"empty pattern", map[string]any{"pattern": ""}, toolerr.InvalidArgument},
		{"too long pattern", map[string]any{"pattern": strings.Repeat("a", 1025)}, toolerr.InvalidArgument},
		{"bad include", map[string]any{"pattern": "x", "include": "[a-"}, toolerr.InvalidArgument},
		{"include outside", map[string]any{"pattern": "x", "include": "../**"}, toolerr.PathOutsideWorkspace},
		{"path outside", map[string]any{"path": "../outside", "pattern": "TODO"}, toolerr.PathOutsideWorkspace},
		{"path missing", map[string]any{"path": "nope", "pattern": "TODO"}, toolerr.NotFound},
		{"escaping file link", map[string]any{"path": "out_file", "pattern": "TODO"}, toolerr.PathSymlinkEscape},
		{"escaping dir link", map[string]any{"path": "out_dir", "pattern": "TODO"}, toolerr.PathSymlinkEscape},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			e := callErr(f, "grep_files", tt.args, tt.code)
			require.NotContains(t, e.Message, "outside secret")
		})
	}
}

func TestGrepFilesCap(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", strings.Repeat("hit\n", 8))
	f.write("b.txt", "hit\n")
	got := callOK[fs.GrepOut](f, "grep_files", map[string]any{"pattern": "hit"})
	require.Len(t, got.Matches, 5)
	require.True(t, got.Truncated)
	for i, x := range got.Matches {
		require.Equal(t, fs.Match{Path: "a.txt", Line: i + 1, Text: "hit"}, x)
	}

	got = callOK[fs.GrepOut](f, "grep_files", map[string]any{"pattern": "hit", "path": "b.txt"})
	require.Len(t, got.Matches, 1)
	require.False(t, got.Truncated)
}
