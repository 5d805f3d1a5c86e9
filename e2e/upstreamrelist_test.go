package e2e

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
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

// relistSetup writes the config of the hostile upstream that lists one
// more tool (status) while the file added exists and a changed notes
// while changed does, and pins the listing with status: the operator
// pinned the next version ahead of the upgrade.
func relistSetup(t *testing.T) (ws string, env []string, file, added, changed string) {
	bin := buildHostile(t)
	ws, env = workspace(t)
	env = append(env, "XDG_STATE_HOME="+filepath.Join(filepath.Dir(ws), "state"))
	dir := filepath.Dir(ws)
	added, changed = filepath.Join(dir, "added"), filepath.Join(dir, "changed")
	file = upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
capabilities:
  grant: ["mcp:call:hostile/status"]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack, --changed-if, `+changed+`, --added-if, `+added+`]
    sandbox: false
`)
	require.NoError(t, os.WriteFile(added, nil, 0o644))
	out, code := runPin(t, env, "--config", file, "--workspace", ws)
	require.Zero(t, code, out)
	require.NoError(t, os.Remove(added))
	return ws, env, file, added, changed
}

// relistAfterRestart is the scenario on a client c connected all along,
// whose notifications/tools/list_changed are counted in notified.
func relistAfterRestart(t *testing.T, c *client.Client, env []string, added, changed string, notified *atomic.Int32) {
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

func countListChanged(n *atomic.Int32) func(mcp.JSONRPCNotification) {
	return func(m mcp.JSONRPCNotification) {
		if m.Method == string(mcp.MethodNotificationToolsListChanged) {
			n.Add(1)
		}
	}
}

// TestUpstreamRelistAfterRestart: the upstream comes back from a crash
// as a new version, with one more tool (status, pinned by the operator
// ahead of the upgrade and allowed by the policy's glob) and a changed
// one (notes, a rug pull). A client connected over stdio all along is
// sent notifications/tools/list_changed; its next tools/list offers
// status, which runs, and no longer notes, whose calls get
// denied.tool_drift.
func TestUpstreamRelistAfterRestart(t *testing.T) {
	t.Parallel()
	ws, env, file, added, changed := relistSetup(t)
	var notified atomic.Int32
	c := listeningClient(t, ws, env, file, countListChanged(&notified))
	relistAfterRestart(t, c, env, added, changed, &notified)
}

// TestUpstreamRelistAfterRestartHTTP is the same for a client of an HTTP
// session, which gets the notification on its GET stream.
func TestUpstreamRelistAfterRestartHTTP(t *testing.T) {
	t.Parallel()
	ws, env, file, added, changed := relistSetup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", addr, "--config", file)
	cmd.Env = append(env, "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "serving HTTP") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	//lint:ignore SA1019 the GET event stream of the session-based protocol is the subject
	tr, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", transport.WithContinuousListening(),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	c := client.NewClient(tr)
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	var notified atomic.Int32
	c.OnNotification(countListChanged(&notified))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = legacyProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e-http", Version: "1"}
	_, err = c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	relistAfterRestart(t, c, env, added, changed, &notified)
}
