package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// nsfsMounts lists the network-namespace (nsfs) mounts under dir.
func nsfsMounts(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		sep := 0
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(fields) || fields[sep+1] != "nsfs" {
			continue
		}
		if mp := fields[4]; mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// currentRunsc is the runsc scripts/sandbox-setup builds: the test's HOME
// hides it from the server, and Debian's older runsc (ptrace only) makes
// no namespace mount.
func currentRunsc(t *testing.T) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	require.NoError(t, err)
	p := filepath.Join(dir, "toolwarden", "bin", "runsc")
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "no current runsc at %s (run scripts/sandbox-setup): %v", p, err)
	}
	return p
}

// runScriptArgs lets run_script run unasked: the test is about what the
// sandbox leaves behind, not about policy.
var runScriptArgs = []string{"--allow", "run_script", "--approval", "run_script=allow"}

// stdioServe starts `toolwarden serve` over stdio, initialized and with one
// run_script call answered, and returns it with its stdin.
func stdioServe(t *testing.T, ws string, env []string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--workspace", ws}, runScriptArgs...)...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	send := func(msg string) {
		_, err := io.WriteString(in, msg+"\n")
		require.NoError(t, err)
	}
	answer := func() map[string]any {
		require.True(t, lines.Scan(), "the server answers")
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_script","arguments":{"interpreter":"bash","script":"echo ran"}}}`)
	res := answer()
	require.Contains(t, res["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "ran")
	return cmd, in
}

// TestNetnsMountRemoved holds the server to leaving no nsfs mount in its
// sandbox state directory: runsc mounts its null network namespace there
// and never removes it. A clean exit removes it; after kill -9 the next
// start does.
func TestNetnsMountRemoved(t *testing.T) {
	testenv.Root(t)
	ws, env := workspace(t)
	state := filepath.Join(os.TempDir(), "toolwarden-test-sandbox", "netns")
	env = append(env, "TOOLWARDEN_EXEC_STATE_DIR="+state, "TOOLWARDEN_EXEC_BACKEND=runsc",
		"TOOLWARDEN_EXEC_RUNSC_PATH="+currentRunsc(t))

	t.Run("call exits cleanly", func(t *testing.T) {
		cmd := exec.Command(binary, append([]string{"call", "--workspace", ws}, append(runScriptArgs,
			"run_script", `{"interpreter":"bash","script":"echo ran"}`)...)...)
		cmd.Env = env
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "ran")
		require.Empty(t, nsfsMounts(t, state))
	})

	t.Run("serve exits cleanly", func(t *testing.T) {
		cmd, in := stdioServe(t, ws, env)
		require.NotEmpty(t, nsfsMounts(t, state), "runsc mounts its network namespace while the server runs")
		require.NoError(t, in.Close())
		require.NoError(t, cmd.Wait())
		require.Empty(t, nsfsMounts(t, state))
	})

	t.Run("next start after kill -9", func(t *testing.T) {
		cmd, _ := stdioServe(t, ws, env)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		require.NotEmpty(t, nsfsMounts(t, state), "a killed server cannot clean up")
		next := exec.Command(binary, "call", "--workspace", ws, "list_directory", `{"path":"."}`)
		next.Env = env
		out, err := next.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Empty(t, nsfsMounts(t, state), "the next start removed the leftover")
	})
}
