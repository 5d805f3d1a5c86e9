package workspacepath_test

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
)

// FuzzClean checks the invariants of every path Clean accepts, and
// that os.Root never reports an escape for one. Hostile seeds are also
// checked in under testdata/fuzz/FuzzClean.
func FuzzClean(f *testing.F) {
	for _, seed := range []string{
		"src/pkg/file.go", ".", "a/b/../c", "../x", "a/../../x", "/etc/passwd",
		"%2e%2e/x", "..\\x", "C:/x", "./C:/x", "a\x00b", "a\u202eb", "\xff",
	} {
		f.Add(seed)
	}
	root, err := os.OpenRoot(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = root.Close() })
	require := func(t *testing.T, ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Fatalf(format, args...)
		}
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := workspacepath.Clean(p)
		if err != nil {
			var te *toolerr.Error
			require(t, errors.As(err, &te), "Clean(%q) returned an uncoded error %T: %v", p, err, err)
			require(t, te.Code != "" && te.Rule != "", "Clean(%q): code %q rule %q must be set", p, te.Code, te.Rule)
			require(t, got == "", "Clean(%q) rejected the path but returned %q", p, got)
			return
		}
		require(t, got != "", "Clean(%q) accepted an empty result", p)
		require(t, !path.IsAbs(got) && !filepath.IsAbs(got), "Clean(%q) = %q is absolute", p, got)
		require(t, got != ".." && !strings.HasPrefix(got, "../"), "Clean(%q) = %q climbs out", p, got)
		require(t, !strings.ContainsAny(got, "\\\x00"), "Clean(%q) = %q has a backslash or NUL", p, got)
		require(t, !isDrive(got), "Clean(%q) = %q starts with a drive letter", p, got)
		require(t, utf8.ValidString(got), "Clean(%q) = %q is not UTF-8", p, got)
		require(t, len(got) <= workspacepath.MaxPathBytes, "Clean(%q) is too long", p)
		require(t, path.Clean(got) == got, "Clean(%q) = %q is not clean", p, got)
		require(t, filepath.IsLocal(got) || got == ".", "Clean(%q) = %q is not local", p, got)
		again, err := workspacepath.Clean(got)
		require(t, err == nil && again == got, "Clean is not idempotent: %q -> %q -> %q, %v", p, got, again, err)

		for _, op := range []func() error{
			func() error { _, err := root.Stat(got); return err },
			func() error { _, err := root.Lstat(got); return err },
			func() error {
				fh, err := root.OpenFile(got, os.O_RDONLY, 0)
				if err == nil {
					fh.Close()
				}
				return err
			},
		} {
			if err := op(); err != nil {
				require(t, !strings.Contains(err.Error(), "escapes"), "os.Root says %q escapes: %v", got, err)
			}
		}
	})
}

// isDrive reports whether p starts like a Windows drive path ("C:").
func isDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(p[0]))
}
