package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/sandbox"
)

func BenchmarkCleanPath(b *testing.B) {
	for _, bm := range []struct{ name, path string }{
		{"typical", "src/pkg/file.go"},
		{"unclean", "./src//pkg/../pkg/file.go"},
		{"deep", strings.Repeat("dir/", 40) + "file.go"},
		{"rejected", "../../etc/passwd"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = sandbox.CleanPath(bm.path)
			}
		})
	}
}

func BenchmarkWorkspaceStat(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "pkg", "file.go"), []byte("package pkg\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := sandbox.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	b.ReportAllocs()
	for b.Loop() {
		rel, err := sandbox.CleanPath("src/pkg/file.go")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ws.Stat(rel); err != nil {
			b.Fatal(err)
		}
	}
}
