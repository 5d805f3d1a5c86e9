package workspacepath_test

import (
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/workspacepath"
)

func BenchmarkClean(b *testing.B) {
	for _, bm := range []struct{ name, path string }{
		{"typical", "src/pkg/file.go"},
		{"unclean", "./src//pkg/../pkg/file.go"},
		{"deep", strings.Repeat("dir/", 40) + "file.go"},
		{"rejected", "../../etc/passwd"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = workspacepath.Clean(bm.path)
			}
		})
	}
}
