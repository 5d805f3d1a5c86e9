package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/fs"
)

func entryPaths(entries []fs.Entry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}

func TestListDirectory(t *testing.T) {
	f := newFixture(t)
	f.write("b.txt", "bb")
	f.write("a.txt", "a")
	f.write(".hidden", "h")
	f.write("c/d.txt", "d")
	f.write("Z.md", "z")
	f.write(tempName, "half-written")
	f.symlink("../outside", "out")
	f.symlink("c", "c_alias")

	tests := []struct {
		name string
		args map[string]any
		want []fs.Entry
	}{
		{"root by default", map[string]any{}, []fs.Entry{
			{Path: ".hidden", Type: "file", Size: 1},
			{Path: "Z.md", Type: "file", Size: 1},
			{Path: "a.txt", Type: "file", Size: 1},
			{Path: "b.txt", Type: "file", Size: 2},
			{Path: "c", Type: "directory"},
			{Path: "c_alias", Type: "symlink"},
			{Path: "out", Type: "symlink"},
		}},
		{"subdirectory", map[string]any{"path": "c"}, []fs.Entry{{Path: "c/d.txt", Type: "file", Size: 1}}},
		{"unclean path", map[string]any{"path": "./c/../c/"}, []fs.Entry{{Path: "c/d.txt", Type: "file", Size: 1}}},
		{"symlinked directory inside", map[string]any{"path": "c_alias"}, []fs.Entry{{Path: "c_alias/d.txt", Type: "file", Size: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			got := callOK[fs.ListOut](f, "list_directory", tt.args)
			require.Equal(t, tt.want, got.Entries)
			require.False(t, got.Truncated)
		})
	}

	for _, tt := range []struct {
		name string
		path string
		code toolerr.Code
	}{
		{"a file", "a.txt", toolerr.NotADirectory},
		{"missing", "nope", toolerr.NotFound},
		{"symlinked directory outside", "out", toolerr.PathSymlinkEscape},
		{"outside", "..", toolerr.PathOutsideWorkspace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			callErr(f, "list_directory", map[string]any{"path": tt.path}, tt.code)
		})
	}
}

func TestListDirectoryEntryCap(t *testing.T) {
	for _, n := range []int{9, 10, 11, 25} {
		t.Run(fmt.Sprintf("%d entries", n), func(t *testing.T) {
			f := newFixture(t)
			for i := range n {
				f.write(fmt.Sprintf("f%02d.txt", i), "x")
			}
			got := callOK[fs.ListOut](f, "list_directory", map[string]any{})
			require.Len(t, got.Entries, min(n, 10))
			require.Equal(t, n > 10, got.Truncated)
			require.Equal(t, "f00.txt", got.Entries[0].Path)
		})
	}
}

func TestDirectoryTree(t *testing.T) {
	f := newFixture(t)
	f.write("a/b/c/d.txt", "d")
	f.write("a/top.txt", "t")
	f.write(".git/config", "[core]")
	f.write("a/.git/HEAD", "ref")
	f.write("a/"+tempName, "x")
	f.symlink("a", "alias")
	f.symlink("../outside", "out")

	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"depth 1", map[string]any{"max_depth": 1}, []string{".git", "a", "alias", "out"}},
		{"depth 2", map[string]any{"max_depth": 2}, []string{".git", "a", "a/.git", "a/b", "a/top.txt", "alias", "out"}},
		{"default depth is the maximum", map[string]any{}, []string{".git", "a", "a/.git", "a/b", "a/b/c", "a/top.txt", "alias", "out"}},
		{"depth above the maximum is clamped", map[string]any{"max_depth": 99}, []string{".git", "a", "a/.git", "a/b", "a/b/c", "a/top.txt", "alias", "out"}},
		{"subdirectory depth is relative", map[string]any{"path": "a", "max_depth": 1}, []string{"a/.git", "a/b", "a/top.txt"}},
		{"deep subdirectory", map[string]any{"path": "a/b"}, []string{"a/b/c", "a/b/c/d.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			got := callOK[fs.ListOut](f, "directory_tree", tt.args)
			require.Equal(t, tt.want, entryPaths(got.Entries))
			require.False(t, got.Truncated)
		})
	}
	t.Run("types", func(t *testing.T) {
		f := f.on(t)
		got := callOK[fs.ListOut](f, "directory_tree", map[string]any{"max_depth": 1})
		types := map[string]string{}
		for _, e := range got.Entries {
			types[e.Path] = e.Type
		}
		require.Equal(t, map[string]string{".git": "directory", "a": "directory", "alias": "symlink", "out": "symlink"}, types)
	})
	t.Run("entry cap", func(t *testing.T) {
		f := newFixture(t)
		for i := range 4 {
			for j := range 3 {
				f.write(fmt.Sprintf("d%d/f%d.txt", i, j), "x")
			}
		}
		got := callOK[fs.ListOut](f, "directory_tree", map[string]any{})
		require.Len(t, got.Entries, 10)
		require.True(t, got.Truncated)
	})
	for _, tt := range []struct {
		name string
		path string
		code toolerr.Code
	}{
		{"a file", "a/top.txt", toolerr.NotADirectory},
		{"missing", "nope", toolerr.NotFound},
		{"symlinked directory outside", "out", toolerr.PathSymlinkEscape},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			callErr(f, "directory_tree", map[string]any{"path": tt.path}, tt.code)
		})
	}
}

func TestFileInfo(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "hello")
	require.NoError(t, os.Chmod(filepath.Join(f.dir, "a.txt"), 0o640))
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	require.NoError(t, os.Chtimes(filepath.Join(f.dir, "a.txt"), mtime, mtime))
	f.mkdir("dir")
	f.symlink("../outside/secret.txt", "out")

	tests := []struct {
		name string
		path string
		want fs.FileInfoOut
	}{
		{"file", "a.txt", fs.FileInfoOut{Path: "a.txt", Type: "file", Size: 5, Mode: "-rw-r-----", Modified: "2024-05-06T07:08:09Z"}},
		{"symlink is not followed", "out", fs.FileInfoOut{Path: "out", Type: "symlink", Size: int64(len("../outside/secret.txt"))}},
		{"directory", "dir", fs.FileInfoOut{Path: "dir", Type: "directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			got := callOK[fs.FileInfoOut](f, "file_info", map[string]any{"path": tt.path})
			require.Equal(t, tt.want.Path, got.Path)
			require.Equal(t, tt.want.Type, got.Type)
			if tt.want.Type != "directory" {
				require.Equal(t, tt.want.Size, got.Size)
			}
			if tt.want.Mode != "" {
				require.Equal(t, tt.want.Mode, got.Mode)
				require.Equal(t, tt.want.Modified, got.Modified)
			}
			_, err := time.Parse(time.RFC3339, got.Modified)
			require.NoError(t, err)
		})
	}
	for _, tt := range []struct {
		name string
		path string
		code toolerr.Code
	}{
		{"missing", "nope", toolerr.NotFound},
		{"through the escaping link", "out/x", toolerr.PathSymlinkEscape},
		{"outside", "../outside/secret.txt", toolerr.PathOutsideWorkspace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := f.on(t)
			callErr(f, "file_info", map[string]any{"path": tt.path}, tt.code)
		})
	}
}
