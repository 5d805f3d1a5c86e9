package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDelegatedScope runs where the user's systemd manager delegates a
// cgroup v2 subtree (an ordinary user's session on a cgroup v2 machine):
// a rootless run's memory is then a total the kernel enforces. Elsewhere
// (root, cgroup v1, no user manager) it reports itself as not run.
func TestDelegatedScope(t *testing.T) {
	s, why := findScope(context.Background())
	if s == nil {
		t.Skipf("not run: no delegated cgroup v2 here (%s); rootless runs use rlimits", why)
	}
	r, err := Detect(context.Background(), DetectOptions{Backend: "bwrap", StateDir: t.TempDir()})
	require.NoError(t, err)
	b := r.(*Bwrap)
	require.NotNil(t, b.Scope)
	require.Contains(t, b.Enforcement().Limits[EnforceMemory], "cgroup")
	res, err := b.Run(context.Background(), Request{Argv: []string{"/usr/bin/python3", "-c",
		"x=[]\nwhile True: x.append(bytearray(16<<20))"}, Env: []string{"PATH=/usr/bin"},
		Limits: Limits{MemoryBytes: 128 << 20, Timeout: 20 * time.Second}})
	require.NoError(t, err)
	require.Equal(t, 137, res.ExitCode, "killed by the scope's OOM killer: %s", res.Stderr)
}
