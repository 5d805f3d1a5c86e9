package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLinkResolverFastPathAgreesWithFullWalk: the one-Lstat-per-component
// walk answers exactly what the full EvalSymlinks walk answers, for plain
// paths, missing ones, links inside and out of the workspace and hostile
// forms.
func TestLinkResolverFastPathAgreesWithFullWalk(t *testing.T) {
	ws := workspaceDir(t.TempDir())
	outside := t.TempDir()
	for _, d := range []string{"a/b", "private"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a/b/f.txt"), nil, 0o644))
	require.NoError(t, os.Symlink("../private", filepath.Join(ws, "a/link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
	require.NoError(t, os.Symlink("a/b/f.txt", filepath.Join(ws, "file-link")))

	full := func(rel string) (string, bool) {
		real, err := resolveExisting(filepath.Join(ws, filepath.FromSlash(rel)))
		if err != nil {
			return "", false
		}
		return relInside(ws, real)
	}
	resolve := linkResolver(ws)
	for _, rel := range []string{
		".", "a", "a/b", "a/b/f.txt", "a/b/new.txt", "new/dir/x", "a//b/./f.txt",
		"a/link", "a/link/key", "out", "out/x", "file-link", "a/b/f.txt/x",
		"..", "../x", "a/../../x", "/etc/passwd", "a/b/../link/k",
	} {
		wantReal, wantOK := full(rel)
		gotReal, gotOK := resolve(rel)
		require.Equal(t, wantOK, gotOK, "%q", rel)
		require.Equal(t, wantReal, gotReal, "%q", rel)
	}
}

// BenchmarkLinkResolver is the guard's symlink check of one path that
// exists and of one that does not yet, both free of links (the common
// case, on every fs call).
func BenchmarkLinkResolver(b *testing.B) {
	ws := workspaceDir(b.TempDir())
	require.NoError(b, os.MkdirAll(filepath.Join(ws, "src/pkg"), 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(ws, "src/pkg/main.go"), nil, 0o644))
	resolve := linkResolver(ws)
	for _, rel := range []string{"src/pkg/main.go", "src/new/file.go"} {
		b.Run(rel, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := resolve(rel); !ok {
					b.Fatal(rel)
				}
			}
		})
	}
}
