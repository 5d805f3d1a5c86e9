package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// tools and config check find the sandbox from this machine's probe
// cache once it has been probed: the second run of each prints the same,
// byte for byte, and leaves the cache as it found it (a probe rewrites
// it), and tools says in its debug log that it did not probe.
func TestOneShotCommandsUseTheProbeCache(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cache := filepath.Join(t.TempDir(), "cache")
	env = append(env, "XDG_CACHE_HOME="+cache, "TOOLWARDEN_LOG_LEVEL=debug")
	run := func(args ...string) (stdout, stderr string) {
		cmd := exec.Command(binary, append(args, "--workspace", ws, "--allow", "run_script")...)
		cmd.Env = env
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), errOut.String())
		return out.String(), errOut.String()
	}
	digest := regexp.MustCompile(`(?m)^tools_sha256: .*$`)
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, command := range [][]string{{"tools"}, {"config", "check"}} {
		require.NoError(t, os.RemoveAll(cache))
		missOut, missLog := run(command...)
		records, err := filepath.Glob(filepath.Join(cache, "toolwarden", "probe", "probe-*.json"))
		require.NoError(t, err)
		require.Len(t, records, 1, "%v probed and kept the outcome", command)
		require.NoError(t, os.Chtimes(records[0], past, past))

		hitOut, hitLog := run(command...)
		require.Equal(t, missOut, hitOut, "%v prints the same from the cache", command)
		require.Equal(t, digest.FindString(missLog), digest.FindString(hitLog))
		info, err := os.Stat(records[0])
		require.NoError(t, err)
		require.True(t, info.ModTime().Equal(past), "%v did not probe again", command)
		if command[0] == "tools" {
			require.Contains(t, missLog, "from_probe_cache=false")
			require.Contains(t, hitLog, "from_probe_cache=true")
			if !strings.Contains(missOut, `"name": "run_script"`) {
				testenv.Missing(t, "no sandbox backend works here (scripts/sandbox-setup): only the failure was cached")
			}
		}
	}
}
