package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDelegatedScope runs where the user's systemd manager delegates a
// cgroup v2 subtree (an ordinary user's session on a cgroup v2 machine):
// a rootless run's memory is then a total the kernel enforces, on both
// backends (under gVisor, the sentry's own memory counts). Elsewhere
// (root, cgroup v1, no user manager) it reports itself as not run.
func TestDelegatedScope(t *testing.T) {
	s, why := findScope(context.Background())
	if s == nil {
		t.Skipf("not run: no delegated cgroup v2 here (%s); rootless runs use rlimits", why)
	}
	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			r, err := Detect(context.Background(), DetectOptions{Backend: backend, StateDir: t.TempDir()})
			require.NoError(t, err)
			e := r.(Enforcer).Enforcement()
			require.Contains(t, e.Limits[EnforceMemory], "cgroup")
			require.Empty(t, e.Weaker)
			res, err := r.Run(context.Background(), Request{Argv: []string{"/usr/bin/python3", "-c",
				"x=[]\nwhile True: x.append(bytearray(16<<20))"}, Env: []string{"PATH=/usr/bin"},
				Limits: Limits{MemoryBytes: 256 << 20, Timeout: 20 * time.Second}})
			require.NoError(t, err)
			require.NotEqual(t, 0, res.ExitCode, "stopped by the scope's memory limit: %s", res.Stderr)
		})
	}
}
