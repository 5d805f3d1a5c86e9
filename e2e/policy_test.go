package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
)

// runBinary runs toolwarden with args and returns stdout and the exit status.
func runBinary(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, stderr.String())
	return string(out), 0
}

// writeConfig writes a config file beside the workspace.
func writeConfig(t *testing.T, ws, yaml string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(ws), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(p, []byte("workspace: "+ws+"\n"+yaml), 0o600))
	return p
}

func resultOf(t *testing.T, out string) mcp.CallToolResult {
	t.Helper()
	var res mcp.CallToolResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	return res
}

func TestCallTrustedVersusMCP(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cfg := writeConfig(t, ws, "policy:\n  require_trust: [file_info]\n")
	args := `{"path":"hello.txt"}`

	c, err := client.NewStdioMCPClient(binary, env, "serve", "--config", cfg)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	for _, tool := range list.Tools {
		require.NotEqual(t, "file_info", tool.Name, "a requires_trust tool is not advertised")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "file_info"
	req.Params.Arguments = map[string]any{"path": "hello.txt"}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "\nRule: trust.required", "over MCP the model is refused")

	out, status := runBinary(t, env, "call", "--config", cfg, "file_info", args)
	require.Equal(t, 2, status, out)
	require.Contains(t, out, `trust.required`, "an untrusted operator call is refused too")
	out, status = runBinary(t, env, "call", "--config", cfg, "--trusted", "file_info", args)
	require.Equal(t, 0, status, out)
	trusted := resultOf(t, out)
	require.False(t, trusted.IsError)
	require.Contains(t, out, `"type": "file"`)

	// A normal tool: the same result over MCP and from call.
	req.Params.Name = "read_file"
	res, err = c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	out, status = runBinary(t, env, "call", "--config", cfg, "read_file", args)
	require.Equal(t, 0, status, out)
	viaCall := resultOf(t, out)
	require.Equal(t, res.Content, viaCall.Content)
	require.JSONEq(t, mustJSON(t, res.StructuredContent), mustJSON(t, viaCall.StructuredContent))

	audit := auditLines(t, env)
	require.Contains(t, audit, `"tool":"file_info","args_sha256"`)
	var sawTrusted bool
	for _, l := range strings.Split(audit, "\n") {
		sawTrusted = sawTrusted || (strings.Contains(l, `"trusted":true`) && strings.Contains(l, `"file_info"`))
	}
	require.True(t, sawTrusted, "the trusted call is audited as trusted:\n%s", audit)
}

// explanation is the part of `policy explain --json`'s output these tests
// read.
type explanation struct {
	Outcome string       `json:"outcome"`
	Rule    string       `json:"rule"`
	Code    string       `json:"code,omitempty"`
	Missing string       `json:"missing,omitempty"`
	Trace   []guard.Step `json:"trace"`
}

func TestPolicyExplainBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))

	out, status := runBinary(t, env, "policy", "explain", "--workspace", ws, "read_file", `{"path":"hello.txt"}`)
	require.Equal(t, 0, status, out)
	require.Contains(t, out, "read_file: allowed (rule allowed)")
	for _, step := range []string{"tool.known", `allow:"read_file"`, "trust.not_required", "capabilities.granted — needs fs:read:hello.txt", "limits.within", "args.valid"} {
		require.Contains(t, out, step)
	}

	narrow := writeConfig(t, ws, "capabilities:\n  grant: [\"fs:read:src/**\"]\n")
	out, status = runBinary(t, env, "policy", "explain", "--config", narrow, "--json", "read_file", `{"path":"hello.txt"}`)
	require.Equal(t, 2, status, out)
	var e explanation
	require.NoError(t, json.Unmarshal([]byte(out), &e))
	require.Equal(t, "denied", string(e.Outcome))
	require.Equal(t, "capabilities.missing", e.Rule)
	require.Equal(t, "fs:read:hello.txt", e.Missing)
	require.Equal(t, "denied.capability", e.Code)
	require.Len(t, e.Trace, 4, "tool, policy, trust, then capabilities denied")

	out, status = runBinary(t, env, "policy", "explain", "--config", narrow, "--grant", "fs:read:*.txt", "read_file", `{"path":"hello.txt"}`)
	require.Equal(t, 0, status, "--grant widens: %s", out)
	out, status = runBinary(t, env, "policy", "explain", "--workspace", ws, "--revoke", "fs:read:hello.*", "read_file", `{"path":"hello.txt"}`)
	require.Equal(t, 2, status, out)
	require.Contains(t, out, `capabilities.deny:"fs:read:hello.*"`, "--revoke beats the built-in grant")

	limited := writeConfig(t, ws, "limits:\n  budget: 3\n  tools:\n    read_*: {cost: 5}\n    file_info: {max_bytes_in: 10}\n")
	out, status = runBinary(t, env, "policy", "explain", "--config", limited, "--json", "read_file", `{"path":"hello.txt"}`)
	require.Equal(t, 2, status, out)
	require.NoError(t, json.Unmarshal([]byte(out), &e))
	require.Equal(t, "limits.budget", e.Missing)
	require.Equal(t, "limit.budget", e.Code)
	out, status = runBinary(t, env, "policy", "explain", "--config", limited, "file_info", `{"path":"hello.txt"}`)
	require.Equal(t, 2, status, out)
	require.Contains(t, out, "missing: limits.tools.file_info.max_bytes_in")

	out, status = runBinary(t, env, "policy", "explain", "--workspace", ws, "read_file", `{"path":"../outside.txt"}`)
	require.Equal(t, 2, status)
	require.Contains(t, out, "path.inside_workspace")
	require.NotContains(t, out, secret, "nothing is executed")
	_, status = runBinary(t, env, "policy", "explain", "--workspace", ws, "read_file", `not json`)
	require.Equal(t, 1, status, "a malformed call is an error, not a decision")
	require.Empty(t, auditLines(t, env), "explain writes no audit line")
}

// auditLines is the audit log of the server run with env, as text.
func auditLines(t *testing.T, env []string) string {
	t.Helper()
	return auditText(t, auditPathOf(t, env))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestLimitsOverStdioBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cfg := writeConfig(t, ws, "limits:\n  budget: 2\n  tools:\n    read_*: {cost: 1}\n    file_info: {max_calls: 1}\n")
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--config", cfg)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	call := func(tool string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = map[string]any{"path": "hello.txt"}
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	require.False(t, call("file_info").IsError)
	denied := call("file_info")
	require.True(t, denied.IsError)
	require.Contains(t, denied.Content[0].(mcp.TextContent).Text, "\nRule: limits.tools.file_info.max_calls")
	require.False(t, call("read_file").IsError)
	require.False(t, call("read_file").IsError)
	denied = call("read_file")
	require.True(t, denied.IsError)
	text := denied.Content[0].(mcp.TextContent).Text
	require.True(t, strings.HasPrefix(text, "limit.budget: "), text)
	require.Contains(t, text, "\nRule: limits.budget")
	require.Contains(t, text, "\nHint: Wait ")
	require.Contains(t, text, "Or ask the operator to raise limits.budget.")
}

func TestHTTPIdentitiesBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cfg := writeConfig(t, ws, "limits:\n  max_calls_per_session: 2\nhttp:\n  identities: [{name: ci, token_env: TW_TEST_CI_TOKEN}]\n")
	env = append(env, "TOOLWARDEN_CONFIG="+cfg, "TW_TEST_CI_TOKEN=ci-token-0123456789abcdef")
	base := startHTTP(t, ws, env)
	read := func(token string) *mcp.CallToolResult {
		c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		require.NoError(t, err)
		require.NoError(t, c.Start(ctxT(t)))
		defer c.Close()
		initialize(t, c)
		req := mcp.CallToolRequest{}
		req.Params.Name = "read_file"
		req.Params.Arguments = map[string]any{"path": "hello.txt"}
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	mainToken := "e2e-token-0123456789"
	require.False(t, read(mainToken).IsError)
	require.False(t, read(mainToken).IsError, "a second session of the same token")
	res := read(mainToken)
	require.True(t, res.IsError, "the third call of the token, in a third session, is over the limit")
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "limits.max_calls_per_session")
	require.False(t, read("ci-token-0123456789abcdef").IsError, "the ci identity counts apart")
	require.Contains(t, auditLines(t, env), `"identity":"ci"`)
}
