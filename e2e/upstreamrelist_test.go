package e2e

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// listedNames are the tools c is offered now.
func listedNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// listeningClient serves file over stdio to a client of the stateful
// protocol, which is sent notifications unasked, each passed to on.
func listeningClient(t *testing.T, ws string, env []string, file string, on func(mcp.JSONRPCNotification)) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--config", file)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	// NewStdioMCPClient starts the transport only; Start (idempotent for
	// it) hands the client's notification handlers to it.
	require.NoError(t, c.Start(ctxT(t)))
	c.OnNotification(on)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "1"}
	_, err = c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	return c
}

// TestUpstreamRelistAfterRestart: the upstream comes back from a crash
// as a new version, with one more tool (status, pinned by the operator
// ahead of the upgrade and allowed by the policy's glob) and a changed
// one (notes, a rug pull). A client connected all along is sent
// notifications/tools/list_changed; its next tools/list offers status,
// which runs, and no longer notes, whose calls get denied.tool_drift.
func TestUpstreamRelistAfterRestart(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	env = append(env, "XDG_STATE_HOME="+filepath.Join(filepath.Dir(ws), "state"))
	dir := filepath.Dir(ws)
	added, changed := filepath.Join(dir, "added"), filepath.Join(dir, "changed")
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
capabilities:
  grant: ["mcp:call:hostile/status"]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack, --changed-if, `+changed+`, --added-if, `+added+`]
    sandbox: false
`)
	// The operator pins the next version's listing: status is in it.
	require.NoError(t, os.WriteFile(added, nil, 0o644))
	out, code := runPin(t, env, "--config", file, "--workspace", ws)
	require.Zero(t, code, out)
	require.NoError(t, os.Remove(added))

	var notified atomic.Int32
	c := listeningClient(t, ws, env, file, func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			notified.Add(1)
		}
	})
	names := listedNames(t, c)
	require.Contains(t, names, "hostile__notes")
	require.NotContains(t, names, "hostile__status")

	pid := upstreamPid(t, c)
	require.NoError(t, os.WriteFile(added, nil, 0o644))
	require.NoError(t, os.WriteFile(changed, nil, 0o644))
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	waitFor(t, "the restart", func() bool {
		return hasOutcome(t, env, "upstream:hostile", guard.OutcomeUpstreamRestarted, "upstream.restart")
	})
	waitFor(t, "notifications/tools/list_changed", func() bool { return notified.Load() > 0 })

	names = listedNames(t, c)
	require.Contains(t, names, "hostile__status", "the added tool is offered")
	require.NotContains(t, names, "hostile__notes", "the changed tool is withheld")
	require.Contains(t, names, "hostile__leak", "the others stay")
	res := callUpstream(t, c, "hostile__status", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Equal(t, "status: up", text(t, res))
	deniedWith(t, callUpstream(t, c, "hostile__notes", nil), toolerr.DeniedToolDrift)
	require.True(t, hasOutcome(t, env, "hostile__notes", guard.OutcomeDrift, "upstream_pins.block"))
}
