package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/sandbox"
)

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
		rel, err := workspacepath.Clean("src/pkg/file.go")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ws.Stat(rel); err != nil {
			b.Fatal(err)
		}
	}
}
