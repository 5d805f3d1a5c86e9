package audit

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestAuditRecoversFromAFullVolume: appends fail while the volume is full,
// leave no partial line behind, and succeed again once space is freed,
// with the same open log.
func TestAuditRecoversFromAFullVolume(t *testing.T) {
	dir := testenv.SmallVolume(t, "64k")
	path := filepath.Join(dir, "audit.jsonl")
	a := openRotating(t, path, Options{Sync: SyncAlways})
	require.NoError(t, a.Append(testEntry(0)))
	filler := testenv.Fill(t, dir)

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
