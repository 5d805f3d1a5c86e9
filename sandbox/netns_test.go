package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestRemoveNetnsMount mounts this process's network namespace on a file
// the way runsc does, once or stacked, and removes it.
func TestRemoveNetnsMount(t *testing.T) {
	testenv.Root(t)
	for _, stacked := range []int{0, 1, 3} {
		t.Run(strings.Repeat("mount ", stacked)+"then remove", func(t *testing.T) {
			p := filepath.Join(t.TempDir(), nullNetns)
			if stacked > 0 {
				require.NoError(t, os.WriteFile(p, nil, 0o444))
			}
			for range stacked {
				require.NoError(t, unix.Mount("/proc/self/ns/net", p, "", unix.MS_BIND, ""))
			}
			require.NoError(t, removeNetnsMount(p))
			require.NoFileExists(t, p)
			info, err := os.ReadFile("/proc/self/mountinfo")
			require.NoError(t, err)
			require.NotContains(t, string(info), p)
		})
	}
}

// TestLockNetns: a run's shared lock keeps removal away; without runs,
// removal gets the lock, and runs wait only for it.
func TestLockNetns(t *testing.T) {
	dir := t.TempDir()
	run1, err := lockNetns(dir, false)
	require.NoError(t, err)
	run2, err := lockNetns(dir, false)
	require.NoError(t, err, "runs share the lock")
	_, err = lockNetns(dir, true)
	require.ErrorIs(t, err, errBusy)
	run1()
	_, err = lockNetns(dir, true)
	require.ErrorIs(t, err, errBusy, "one run is enough")
	run2()
	remove, err := lockNetns(dir, true)
	require.NoError(t, err)
	remove()
}
