package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// upstreamConfig writes a config file beside ws holding body.
func upstreamConfig(t *testing.T, ws, body string) string {
	t.Helper()
	file := filepath.Join(filepath.Dir(ws), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
	return file
}

// serveUpstream starts `toolwarden serve` over stdio with file and lists
// the tool names the client is offered.
func serveUpstream(t *testing.T, ws string, env []string, file string) (*client.Client, []string) {
	t.Helper()
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--config", file)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	initialize(t, c)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return c, names
}

// callUpstream calls tool with args and returns the result.
func callUpstream(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	return res
}

// deniedWith asserts res is a denial with code.
func deniedWith(t *testing.T, res *mcp.CallToolResult, code toolerr.Code) {
	t.Helper()
	require.True(t, res.IsError, "%+v", res.Content)
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "%+v", res.Content)
	require.Equal(t, code, e.Code, e.Message)
}

// TestUpstreamEverything puts the MCP reference server "everything"
// (npm, pinned, written by no one here) behind toolwarden as an upstream:
// only the allowed tools are listed, namespaced; a call goes through the
// guard and comes back; wrong arguments are refused by the upstream's own
// schema before it sees them; a hidden tool is denied; a tool not
// annotated read-only asks for approval, which a client without
// elicitation cannot give.
func TestUpstreamEverything(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_SERVER_EVERYTHING")[0]
	t.Parallel()
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: [everything__echo, everything__get-sum, everything__toggle-simulated-logging]
capabilities:
  grant: ["fs:read:**", "mcp:call:everything/toggle-simulated-logging"]
upstreams:
  - name: everything
    command: [`+bin+`, stdio]
    sandbox: false
`)
	c, names := serveUpstream(t, ws, env, file)
	require.ElementsMatch(t, []string{"everything__echo", "everything__get-sum", "everything__toggle-simulated-logging"}, names)

	res := callUpstream(t, c, "everything__echo", map[string]any{"message": "hello upstream"})
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello upstream")

	deniedWith(t, callUpstream(t, c, "everything__get-sum", map[string]any{"a": "one", "b": 2}), toolerr.InvalidSchema)
	deniedWith(t, callUpstream(t, c, "everything__get-sum", map[string]any{"a": 1, "b": 2, "c": 3}), toolerr.InvalidSchema)
	deniedWith(t, callUpstream(t, c, "everything__get-env", nil), toolerr.DeniedNotAllowed)
	deniedWith(t, callUpstream(t, c, "everything__toggle-simulated-logging", nil), toolerr.DeniedApprovalUnavailable)

	res = callUpstream(t, c, "everything__get-sum", map[string]any{"a": 2, "b": 40})
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "42")

	var got []string
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Outcome != guard.OutcomeStarted {
			got = append(got, e.Tool+" "+string(e.Outcome)+" "+e.Rule)
		}
	}
	require.Equal(t, []string{
		"everything__echo allowed allowed",
		"everything__echo completed allowed",
		"everything__get-sum denied args.schema",
		"everything__get-sum denied args.schema",
		"everything__get-env denied default:not_allowlisted",
		"everything__toggle-simulated-logging needs_approval approval.elicit",
		"everything__toggle-simulated-logging declined approval.elicit",
		"everything__get-sum allowed allowed",
		"everything__get-sum completed allowed",
	}, got, "a denied call never reaches the upstream: no completed line")
}

// TestUpstreamHostile puts a compromised upstream (built from testdata)
// behind toolwarden: its output's credential is redacted and its
// instruction to the model flagged, like any tool output; it receives
// only PATH and the variable its config names; its tool whose namespaced
// name is too long and its tool whose description holds an instruction to
// the model are withheld, and config check says why; a flagged tool the
// operator accepts is listed with its description filtered.
func TestUpstreamHostile(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	bin := filepath.Join(t.TempDir(), "hostileupstream")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/hostileupstream").CombinedOutput()
	require.NoError(t, err, "%s", out)
	env = append(env, "E2E_UPSTREAM_TOKEN=plain-marker-value", "E2E_NOT_FOR_UPSTREAM=1")
	// leak's secret taints the session; TestTaintBinary tests that, so
	// the later calls here run with the taint off.
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
  taint: "off"
limits: {call_timeout: 1s, timeout_grace: 0s}
upstreams:
  - name: hostile
    command: [`+bin+`]
    sandbox: false
    env: {UPSTREAM_TOKEN_env: E2E_UPSTREAM_TOKEN}
    accept_flagged: [tidy]
`)
	c, names := serveUpstream(t, ws, env, file)
	require.ElementsMatch(t, []string{"hostile__leak", "hostile__environ", "hostile__tidy", "hostile__hang", "hostile__notes"}, names,
		"helper's poisoned description is withheld; tidy's invisible characters are accepted")
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	for _, tool := range list.Tools {
		if tool.Name == "hostile__tidy" {
			require.Equal(t, "Tidies text.", tool.Description, "an accepted definition is listed filtered, never verbatim")
		}
	}

	res := callUpstream(t, c, "hostile__leak", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	var all strings.Builder
	for _, x := range res.Content {
		all.WriteString(x.(mcp.TextContent).Text + "\n")
	}
	require.NotContains(t, all.String(), "AKIAZ7Q2VNKW4HXJ5LMT")
	require.Contains(t, all.String(), "[REDACTED:")
	last := res.Content[len(res.Content)-1].(mcp.TextContent).Text
	require.True(t, strings.HasPrefix(last, outfilter.WarningPrefix), last)
	require.Contains(t, last, "untrusted")
	entries := audittest.Entries(t, auditPathOf(t, env))
	require.Equal(t, "hostile__leak", entries[len(entries)-1].Tool)
	require.Equal(t, 1, entries[len(entries)-1].Redactions)

	// A hung upstream meets the call's deadline; the next call still works.
	deniedWith(t, callUpstream(t, c, "hostile__hang", nil), toolerr.Timeout)

	res = callUpstream(t, c, "hostile__environ", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Equal(t, "PATH,UPSTREAM_TOKEN\nUPSTREAM_TOKEN=plain-marker-value", res.Content[0].(mcp.TextContent).Text)

	cmd := exec.Command(binary, "config", "check", "--config", file, "--workspace", ws)
	cmd.Env = env
	check, err := cmd.Output()
	require.NoError(t, err)
	require.Contains(t, string(check), "upstream:hostile tool "+strings.Repeat("x", 60))
	require.Contains(t, string(check), "upstreams[0]: its namespaced name")
	require.Contains(t, string(check), `upstreams adds "hostile": runs`)
	require.Contains(t, string(check), "upstream:hostile tool helper")
	require.Contains(t, string(check), `title or description holds "<important>", which reads as an instruction to the model`)
	require.Contains(t, string(check), `upstreams "hostile" accept_flagged offers "tidy"`)
}

// TestUpstreamSandboxRefused: an upstream left at the default sandbox:
// true is never run unsandboxed: with no working sandbox backend it is
// unavailable, with the reason; an unreachable one makes only its own
// toolset unavailable.
func TestUpstreamSandboxRefused(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	marker := filepath.Join(filepath.Dir(ws), "ran")
	file := upstreamConfig(t, ws, "upstreams:\n  - name: files\n    command: [/usr/bin/touch, "+marker+"]\n")
	out := configCheck(t, append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap", "TOOLWARDEN_EXEC_BWRAP_PATH=/nonexistent/bwrap"), ws, file)
	require.Contains(t, out, "toolset: upstream:files")
	require.Contains(t, out, "sandbox: true (the default) and no sandbox backend to run it in")
	_, err := os.Stat(marker)
	require.ErrorIs(t, err, os.ErrNotExist, "the upstream ran unsandboxed")

	file = upstreamConfig(t, ws, "upstreams:\n  - name: gone\n    command: [/nonexistent/server]\n    sandbox: false\n")
	require.Contains(t, configCheck(t, env, ws, file), "toolset: upstream:gone")
}

// TestUpstreamHTTP: a remote upstream over streamable HTTP (served here on
// loopback) gets the header its headers_env names on every request, and
// its tool is called through the guard, its output filtered.
func TestUpstreamHTTP(t *testing.T) {
	t.Parallel()
	s := server.NewMCPServer("remote", "1.0.0")
	s.AddTool(mcp.NewTool("status", mcp.WithDescription("Reports the service status."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("up; aws_access_key_id = AKIAQ3XW7PLM2VNK5RTY"), nil
		})
	const auth = "Bearer up-e2e-token"
	var unauthorized atomic.Int32
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != auth {
			unauthorized.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ws, env := workspace(t)
	env = append(env, "E2E_UPSTREAM_AUTH="+auth)
	file := upstreamConfig(t, ws, `
policy:
  allow: ["remote__*"]
upstreams:
  - name: remote
    url: `+srv.URL+`/mcp
    headers_env: {Authorization: E2E_UPSTREAM_AUTH}
`)
	c, names := serveUpstream(t, ws, env, file)
	require.Equal(t, []string{"remote__status"}, names)
	res := callUpstream(t, c, "remote__status", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	text := res.Content[0].(mcp.TextContent).Text
	require.Contains(t, text, "up; aws_access_key_id = [REDACTED:")
	require.NotContains(t, text, "AKIAQ3XW7PLM2VNK5RTY")
	require.Zero(t, unauthorized.Load(), "every request carried the header")
}
