package audit

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// smallVolume mounts a 64 KiB tmpfs for the test (root only).
func smallVolume(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root (CI runs as root)")
	}
	dir := t.TempDir()
	require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700"))
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a filler file until the volume is full and returns it.
func fill(t *testing.T, dir string) string {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 512)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return filler
		}
	}
}

// TestAuditRecoversFromAFullVolume: appends fail while the volume is full,
// leave no partial line behind, and succeed again once space is freed,
// with the same open log.
func TestAuditRecoversFromAFullVolume(t *testing.T) {
	dir := smallVolume(t)
	path := filepath.Join(dir, "audit.jsonl")
	a := openRotating(t, path, Options{Sync: SyncAlways})
	require.NoError(t, a.Append(testEntry(0)))
	filler := fill(t, dir)

	var err error
	for i := 1; i <= 64 && err == nil; i++ { // the file's last page may still have room for a few lines
		err = a.Append(testEntry(i))
	}
	require.Error(t, err, "the volume is full")
	require.True(t, errors.Is(err, syscall.ENOSPC), "got %v", err)
	require.Error(t, a.Append(testEntry(100)), "and stays so until space is freed")
	before, err := verifyLines(readLines(t, path))
	require.NoError(t, err, "no partial line is left behind")

	require.NoError(t, os.Remove(filler))
	require.NoError(t, a.Append(testEntry(101)))
	after, err := verifyLines(readLines(t, path))
	require.NoError(t, err)
	require.Equal(t, before.Lines+1, after.Lines)
	require.Empty(t, after.Torn)
}
