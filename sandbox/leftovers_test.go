package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/sandbox"
)

func TestRemoveLeftovers(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("/usr/bin/true")
	require.NoError(t, dead.Run())
	live := os.Getpid()
	files := map[string]bool{ // path: removed
		fmt.Sprintf("a/.toolwarden-tmp-%d-0011", dead.Process.Pid): true,  // killed writer
		fmt.Sprintf(".toolwarden-tmp-%d-0022", dead.Process.Pid):   true,  // at the top
		fmt.Sprintf("a/b/.toolwarden-tmp-%d-0033", live):           false, // a live writer's
		".toolwarden-tmp-0123456789abcdef":                         false, // old format, recent
		"a/.toolwarden-tmp-fedcba9876543210":                       true,  // old format, old
		fmt.Sprintf("a/not-ours-%d", dead.Process.Pid):             false,
		"keep.txt": false,
	}
	for p := range files {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte("x"), 0o644))
	}
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "a/.toolwarden-tmp-fedcba9876543210"), old, old))
	// A link to a directory outside is not followed.
	outside := t.TempDir()
	victim := filepath.Join(outside, fmt.Sprintf(".toolwarden-tmp-%d-0044", dead.Process.Pid))
	require.NoError(t, os.WriteFile(victim, []byte("x"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link")))

	ws, err := sandbox.Open(dir)
	require.NoError(t, err)
	defer ws.Close()
	removed, err := ws.RemoveLeftovers(context.Background())
	require.NoError(t, err)
	var want []string
	for p, gone := range files {
		if gone {
			want = append(want, p)
			require.NoFileExists(t, filepath.Join(dir, p))
		} else {
			require.FileExists(t, filepath.Join(dir, p))
		}
	}
	require.ElementsMatch(t, want, removed)
	require.FileExists(t, victim, "nothing outside the workspace is touched")
}
