package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
)

// TestMisspeltEnvIsWarnedAbout runs the binary: TOOLWARDEN_LIMITS_CALL_TIMOUT
// (a misspelling) was silently ignored while an unknown key in a file is
// an error. serve logs a warning naming the nearest variable, config check
// prints it and lists it under warnings, and the limit is not applied.
func TestMisspeltEnvIsWarnedAbout(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_LIMITS_CALL_TIMOUT=10s")
	const want = "env TOOLWARDEN_LIMITS_CALL_TIMOUT sets no config key and is ignored (did you mean TOOLWARDEN_LIMITS_CALL_TIMEOUT?)"

	check := exec.Command(binary, "config", "check", "--workspace", ws)
	check.Env = env
	var stderr strings.Builder
	check.Stderr = &stderr
	out, err := check.Output()
	require.NoError(t, err, stderr.String())
	require.Contains(t, stderr.String(), "toolwarden: warning: "+want)
	require.Contains(t, string(out), "warnings:\n  - "+want)
	require.NotContains(t, string(out), "call_timeout: 10s")

	serve := exec.Command(binary, "serve", "--workspace", ws)
	serve.Env = env
	serve.Stdin = strings.NewReader("") // stdio ends at once: the server starts and stops
	log, err := serve.CombinedOutput()
	require.NoError(t, err, string(log))
	require.Contains(t, string(log), `level=WARN msg="check the environment" warning="`+strings.ReplaceAll(want, `"`, `\"`)+`"`)

	clean := exec.Command(binary, "config", "check", "--workspace", ws)
	clean.Env = append(env[:len(env)-1:len(env)-1], "TOOLWARDEN_LIMITS_CALL_TIMEOUT=10s", "TOOLWARDEN_TEST_ANYTHING=1")
	stderr.Reset()
	clean.Stderr = &stderr
	out, err = clean.Output()
	require.NoError(t, err, stderr.String())
	require.Empty(t, stderr.String(), "a key's variable and the test suite's own draw no warning")
	require.NotContains(t, string(out), "warnings:")
}

// TestConfigCheckTakesServeFlags runs the binary: config check refused
// --http and --approval-page although both change what serve runs.
func TestConfigCheckTakesServeFlags(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	out, status := runBinary(t, env, "config", "check", "--workspace", ws, "--http", "127.0.0.1:0", "--approval-page")
	require.Equal(t, 0, status, out)
	require.Contains(t, out, "  - 'page: the local approval page")
	require.Contains(t, out, "addr: 127.0.0.1:0")

	cmd := exec.Command(binary, "config", "check", "--workspace", ws, "--http", "0.0.0.0:8080")
	cmd.Env = env
	msg, err := cmd.CombinedOutput()
	require.Error(t, err, "--http is checked as serve would: off loopback needs http.allow_remote")
	require.Contains(t, string(msg), "--http: http.addr")
}

// TestUnknownToolAnswerAgrees: policy explain said denied.not_allowed for a
// tool that does not exist while a call got the JSON-RPC error -32602.
// Both now say -32602: explain names the answer a call really gets.
func TestUnknownToolAnswerAgrees(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	out, status := runBinary(t, env, "policy", "explain", "--workspace", ws, "--json", "no_such_tool")
	require.Equal(t, 2, status, out)
	var e struct{ Rule, Answer string }
	require.NoError(t, json.Unmarshal([]byte(out), &e))
	require.Equal(t, "tool.known", e.Rule)
	require.Contains(t, e.Answer, "JSON-RPC error -32602")

	out, status = runBinary(t, env, "policy", "explain", "--workspace", ws, "--deny", "grep_files", "grep_files")
	require.Equal(t, 2, status, out)
	require.Contains(t, out, "answer: tools/call result with isError: true, code denied.not_allowed")

	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--deny", "grep_files")
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	_, err = c.CallTool(ctxT(t), callReq("no_such_tool", map[string]any{}))
	require.ErrorIs(t, err, mcp.ErrInvalidParams, "an unknown tool is the protocol error -32602 (INVALID_PARAMS)")
	_, err = c.CallTool(ctxT(t), callReq(strings.Repeat("x", 5000), map[string]any{}))
	require.ErrorIs(t, err, mcp.ErrInvalidParams)
	probes := audittest.Entries(t, auditPathOf(t, env))
	var denied []string
	for _, e := range probes {
		if e.Rule == "tool.known" {
			require.Equal(t, "denied", string(e.Outcome))
			require.Equal(t, "denied.not_allowed", e.Code)
			denied = append(denied, e.Tool)
		}
	}
	require.Equal(t, []string{"no_such_tool", strings.Repeat("x", 128) + "…(5000 bytes)"}, denied,
		"a probe for a tool that does not exist is audited, its name cut")

	// Over streamable HTTP too, under the caller's identity.
	base := startHTTP(t, ws, env)
	hc, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer e2e-token-0123456789"}))
	require.NoError(t, err)
	require.NoError(t, hc.Start(ctxT(t)))
	defer hc.Close()
	initialize(t, hc)
	_, err = hc.CallTool(ctxT(t), callReq("probe_over_http", map[string]any{}))
	require.ErrorIs(t, err, mcp.ErrInvalidParams)
	require.Eventually(t, func() bool {
		return strings.Contains(auditText(t, auditPathOf(t, env)), `"tool":"probe_over_http","args_sha256"`)
	}, 10*time.Second, 20*time.Millisecond, "the HTTP probe is audited")
	res, err := c.CallTool(ctxT(t), callReq("grep_files", map[string]any{"pattern": "x"}))
	require.NoError(t, err, "a hidden tool is answered with a result")
	require.True(t, res.IsError)
	require.Equal(t, "denied.not_allowed", res.Meta.AdditionalFields["io.toolwarden/error"].(map[string]any)["code"])
}

func callReq(name string, args map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}
