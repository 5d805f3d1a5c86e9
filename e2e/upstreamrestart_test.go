package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// text is the first text content of res.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	return res.Content[0].(mcp.TextContent).Text
}

// upstreamPid is the host PID of the (unsandboxed) hostile upstream.
func upstreamPid(t *testing.T, c *client.Client) int {
	t.Helper()
	res := callUpstream(t, c, "hostile__pid", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	pid, err := strconv.Atoi(text(t, res))
	require.NoError(t, err)
	return pid
}

// TestUpstreamRestart kills the upstream's process (kill -9): it is
// restarted with backoff; while it cannot start (here it exits at once,
// a crash loop), its calls get backend.unavailable naming it and when it
// is retried; once it starts again its calls work, its tools were listed
// again and checked against their pins (a changed one is refused as
// drift), and the audit has each step.
func TestUpstreamRestart(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	dir := filepath.Dir(ws)
	crash, changed := filepath.Join(dir, "crash"), filepath.Join(dir, "changed")
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack, --crash-if, `+crash+`, --changed-if, `+changed+`]
    sandbox: false
`)
	c, _ := serveUpstream(t, ws, env, file)
	pid := upstreamPid(t, c)
	require.NoError(t, os.WriteFile(crash, nil, 0o644))
	require.NoError(t, os.WriteFile(changed, nil, 0o644))
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	waitFor(t, "the upstream down", func() bool {
		return hasOutcome(t, env, "upstream:hostile", guard.OutcomeUpstreamDown, "upstream.exited")
	})
	res := callUpstream(t, c, "hostile__pid", nil)
	deniedWith(t, res, toolerr.BackendUnavailable)
	require.Contains(t, text(t, res), `upstream "hostile" is unavailable`)
	require.Contains(t, text(t, res), "the next restart is at")

	require.NoError(t, os.Remove(crash))
	waitFor(t, "the restart", func() bool {
		return hasOutcome(t, env, "upstream:hostile", guard.OutcomeUpstreamRestarted, "upstream.restart")
	})
	waitFor(t, "a call after the restart", func() bool { return !callUpstream(t, c, "hostile__pid", nil).IsError })
	require.NotEqual(t, pid, upstreamPid(t, c), "a new process")
	waitFor(t, "the drift of notes", func() bool {
		return hasOutcome(t, env, "hostile__notes", guard.OutcomeDrift, "upstream_pins.trust_on_first_use")
	})
	deniedWith(t, callUpstream(t, c, "hostile__notes", nil), toolerr.DeniedToolDrift)
}

// serverPid finds the toolwarden server serving file (its command line
// names it).
func serverPid(t *testing.T, file string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := bytes.Split(cmdline, []byte{0})
		if len(args) > 1 && string(args[0]) == binary && bytes.Contains(cmdline, []byte(file)) {
			return pid
		}
	}
	t.Fatalf("no server process serves %s", file)
	return 0
}

// peakRSS is the high-water mark of pid's resident memory, in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestUpstreamFloodIsCut is the attack: an upstream that answers with a
// 100 MB line is cut at max_message_bytes: the call gets
// backend.unavailable saying why, the audit names the key, the server's
// memory never holds the line, and the upstream is restarted.
func TestUpstreamFloodIsCut(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: [hostile__flood, hostile__pid]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack]
    sandbox: false
    max_message_bytes: 1048576
`)
	c, _ := serveUpstream(t, ws, env, file)
	server := serverPid(t, file)
	before := peakRSS(t, server)
	res := callUpstream(t, c, "hostile__flood", nil)
	deniedWith(t, res, toolerr.BackendUnavailable)
	require.Contains(t, text(t, res), "longer than 1048576 bytes (upstreams[].max_message_bytes)")
	waitFor(t, "the audit line", func() bool {
		return hasOutcome(t, env, "upstream:hostile", guard.OutcomeUpstreamDown, "upstreams[0].max_message_bytes")
	})
	grew := peakRSS(t, server) - before
	t.Logf("server peak RSS %d MiB before the flood, grew by %d MiB", before>>20, grew>>20)
	require.Less(t, grew, int64(32<<20), "the server held much of the 100 MB line")
	waitFor(t, "a call after the restart", func() bool { return !callUpstream(t, c, "hostile__pid", nil).IsError })
}

// TestUpstreamSSE: a remote upstream over SSE (the 2024-11-05 transport,
// served here on loopback) is called through the guard.
func TestUpstreamSSE(t *testing.T) {
	t.Parallel()
	s := server.NewMCPServer("legacy", "1.0.0")
	s.AddTool(mcp.NewTool("status", mcp.WithDescription("Reports the service status."), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("up; aws_access_key_id = AKIAQ3XW7PLM2VNK5RTY"), nil
		})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = server.NewSSEServer(s, server.WithBaseURL("http://"+srv.Listener.Addr().String()))
	srv.Start()
	t.Cleanup(srv.Close) // after the client's cleanup: the SSE stream holds a connection

	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: ["legacy__*"]
upstreams:
  - name: legacy
    url: `+srv.URL+`/sse
    transport: sse
`)
	c, names := serveUpstream(t, ws, env, file)
	require.Equal(t, []string{"legacy__status"}, names)
	res := callUpstream(t, c, "legacy__status", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, text(t, res), "up; aws_access_key_id = [REDACTED:")
}

// TestUpstreamInputRequiredRefused: an upstream that asks the client for
// input in a call's answer (2026-07-28's input_required, with an
// elicitation and request state) gets the call refused with
// backend.denied, rule upstreams.requests: neither the request nor its
// text reaches the client.
func TestUpstreamInputRequiredRefused(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: [hostile__askinline]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack]
    sandbox: false
`)
	c, _ := serveUpstream(t, ws, env, file)
	res := callUpstream(t, c, "hostile__askinline", nil)
	require.True(t, res.IsError, "%+v", res.Content)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "%+v", res.Content)
	require.Equal(t, toolerr.BackendDenied, e.Code)
	require.Equal(t, "upstreams.requests", e.Rule)
	require.Empty(t, res.InputRequests)
	require.Empty(t, res.RequestState)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NotContains(t, string(b), "password")
	require.NotContains(t, string(b), "hostile-state")
}

// TestUpstreamRequestsRefused: an upstream that sends requests of its own
// (sampling, elicitation, roots) gets each refused, audited with its
// method; its call still completes.
func TestUpstreamRequestsRefused(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: [hostile__ask]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack]
    sandbox: false
`)
	c, _ := serveUpstream(t, ws, env, file)
	res := callUpstream(t, c, "hostile__ask", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	for _, method := range []string{"sampling/createMessage", "elicitation/create", "roots/list"} {
		waitFor(t, "the refusal of "+method, func() bool {
			return hasOutcome(t, env, "upstream:hostile", guard.OutcomeUpstreamRequestRefused, "upstream.requests:"+method)
		})
	}
}
