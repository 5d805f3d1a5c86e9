package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// TestWriteOnFullDisk: a write that runs out of space on the workspace's
// disk leaves the old file intact and no temporary file, and says so with
// the io code; after space is freed the same write succeeds.
func TestWriteOnFullDisk(t *testing.T) {
	dir := testenv.SmallVolume(t, "256k")

	old := strings.Repeat("old\n", 1024)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(old), 0o644))
	filler := testenv.Fill(t, dir)

	ws, err := sandbox.Open(dir)
	require.NoError(t, err)
	defer ws.Close()
	err = ws.WriteFileAtomic(context.Background(), "f.txt", []byte(strings.Repeat("new\n", 32<<10)))
	e := toolerr.As(err)
	require.Equal(t, toolerr.IO, e.Code, "%v", err)
	require.Equal(t, "io.disk_full", e.Rule)
	require.Contains(t, e.Message, "no space left")
	data, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	require.NoError(t, err)
	require.Equal(t, old, string(data), "the old file is intact")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, d := range entries {
		require.False(t, sandbox.IsTempName(d.Name()), "temporary file left: %s", d.Name())
	}

	require.NoError(t, os.Remove(filler))
	require.NoError(t, ws.WriteFileAtomic(context.Background(), "f.txt", []byte("new\n")), "works again once space is freed")
}
