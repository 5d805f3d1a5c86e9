package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// serveWithPID starts `toolwarden serve` over stdio with args and returns
// the initialized client and the server's process ID.
func serveWithPID(t *testing.T, env []string, args ...string) (*client.Client, int) {
	t.Helper()
	var cmd *exec.Cmd
	keep := func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd = exec.CommandContext(ctx, command, args...)
		cmd.Env = env
		return cmd, nil
	}
	tr := transport.NewStdioWithOptions(binary, env, append([]string{"serve"}, args...), transport.WithCommandFunc(keep))
	c := client.NewClient(tr)
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	initialize(t, c)
	return c, cmd.Process.Pid
}

// sandboxDescendants lists the processes below pid whose command line
// names a sandbox runtime (runsc and its sandbox and gofer, bwrap).
func sandboxDescendants(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// The command name (field 2) may hold spaces: fields count from after it.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			parent[p] = ppid
		}
	}
	below := func(p int) bool {
		for seen := 0; p > 1 && seen < 64; seen++ {
			if p = parent[p]; p == pid {
				return true
			}
		}
		return false
	}
	var out []string
	for p := range parent {
		if !below(p) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(line, "runsc") || strings.Contains(line, "bwrap") {
			out = append(out, strconv.Itoa(p)+": "+line)
		}
	}
	return out
}

// A default serve offers no tool that runs in a sandbox (run_script is off
// until allowed), so it boots no sandbox: after initialize, tools/list and
// a read_file call, no runsc or bwrap process runs below it.
func TestDefaultServeBootsNoSandbox(t *testing.T) {
	ws, env := workspace(t)
	c, pid := serveWithPID(t, env, "--workspace", ws)
	readHello(t, c)
	// A pool booted by tools/list would show within moments; look a few
	// times over half a second.
	for range 5 {
		require.Empty(t, sandboxDescendants(t, pid), "no sandbox process below the server")
		time.Sleep(100 * time.Millisecond)
	}
}

// With run_script allowed the server boots its sandboxes ahead once a
// client is offered it, and a run works.
func TestAllowedRunScriptStillRuns(t *testing.T) {
	testenv.Root(t)
	ws, env := workspace(t)
	c, pid := serveWithPID(t, env, "--workspace", ws, "--allow", "run_script", "--approval", "run_script=allow")
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	if !slices.ContainsFunc(list.Tools, func(tl mcp.Tool) bool { return tl.Name == "run_script" }) {
		testenv.Missing(t, "run_script is not offered: no working sandbox backend (scripts/sandbox-setup)")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = map[string]any{"interpreter": "python", "script": "print('ran')"}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	out := res.StructuredContent.(map[string]any)
	require.Equal(t, "ran\n", out["stdout"], out["stderr"])
	if strings.HasPrefix(out["sandbox"].(string), "runsc") {
		require.Eventually(t, func() bool { return len(sandboxDescendants(t, pid)) > 0 }, 30*time.Second, 50*time.Millisecond,
			"the pool is booted (exec.warm_pool)")
	}
}
