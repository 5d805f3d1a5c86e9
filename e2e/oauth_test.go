package e2e

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// startOAuthServer runs the binary with OAuth configured for the real
// provider: its public URL (and so its audience) is known before it
// listens, as a provider's client must be allowed that audience. oauthYAML
// is more of http.oauth (indented by 4), yaml more config. It returns the
// base URL and the server's stderr, kept as it goes on.
func startOAuthServer(t *testing.T, ws string, env []string, issuer, oauthYAML, yaml string) (string, *testenv.SyncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	cfg := writeConfig(t, ws, "http:\n  public_url: "+base+"\n  oauth:\n    issuer: "+issuer+
		"\n    scopes: [mcp:tools]\n"+oauthYAML+yaml)
	cmd := exec.Command(binary, "serve", "--config", cfg, "--http", addr)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(stderr)
	started := false
	var out []string
	for !started && sc.Scan() {
		out = append(out, sc.Text())
		started = strings.Contains(sc.Text(), "serving HTTP")
	}
	require.True(t, started, "server did not start: %s", strings.Join(out, "\n"))
	require.NotContains(t, strings.Join(out, "\n"), "generated bearer token", "with OAuth, no static token is made up")
	var rest testenv.SyncBuffer
	go func() {
		for sc.Scan() {
			_, _ = rest.Write(append(sc.Bytes(), '\n'))
		}
	}()
	return base, &rest
}

// TestPythonOAuthDiscovery: the official Python SDK, given only the
// server's URL and its client credentials, discovers everything else
// (401 -> protected-resource metadata -> provider metadata -> token)
// and calls a tool through the built binary.
func TestPythonOAuthDiscovery(t *testing.T) {
	py := testenv.Need(t, "TOOLWARDEN_TEST_PYTHON")[0]
	idp := testenv.NeedOIDC(t)
	script, err := filepath.Abs("../scripts/pyclient/oauth_check.py")
	require.NoError(t, err)
	ws, env := workspace(t)
	base, _ := startOAuthServer(t, ws, env, idp.Issuer, "", "")
	client := idp.Client(t, base+"/mcp")
	cmd := exec.Command(py, script, "--url", base+"/mcp", "--issuer", idp.Issuer, "--client-id", client,
		"--client-secret-env", "OAUTH_CHECK_SECRET", "--scope", "mcp:tools")
	cmd.Env = append(env, "OAUTH_CHECK_SECRET="+idp.Secret)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", errOutput(err))
	requireDiscovered(t, out, env, "oauth:"+client+"@"+idp.Issuer)
}

// TestTypeScriptOAuthDiscovery is TestPythonOAuthDiscovery with the
// official TypeScript SDK's ClientCredentialsProvider.
func TestTypeScriptOAuthDiscovery(t *testing.T) {
	prefix := testenv.Need(t, "TOOLWARDEN_TEST_TS_SDK")[0]
	idp := testenv.NeedOIDC(t)
	script, err := filepath.Abs("../scripts/clients/oauth-ts/check.cjs")
	require.NoError(t, err)
	ws, env := workspace(t)
	base, _ := startOAuthServer(t, ws, env, idp.Issuer, "", "")
	client := idp.Client(t, base+"/mcp")
	cmd := exec.Command("node", script, prefix, base+"/mcp", idp.Issuer, client, "mcp:tools")
	cmd.Env = append(env, "CLIENT_SECRET="+idp.Secret)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", errOutput(err))
	requireDiscovered(t, out, env, "oauth:"+client+"@"+idp.Issuer)
}

// requireDiscovered checks a discovery script's summary: it started from
// the server's 401, read both metadata documents, got a token, called
// read_file, and the audit names the caller.
func requireDiscovered(t *testing.T, out []byte, env []string, identity string) {
	t.Helper()
	var got struct {
		Tools    []string `json:"tools"`
		ReadFile string   `json:"read_file"`
		Requests []string `json:"requests"`
	}
	require.NoError(t, json.Unmarshal(out, &got), string(out))
	require.Equal(t, "ok", got.ReadFile)
	require.Contains(t, got.Tools, "read_file")
	require.Subset(t, got.Requests, []string{"POST /mcp 401", "GET /.well-known/oauth-protected-resource/mcp 200",
		"GET /.well-known/openid-configuration 200", "POST /oauth2/token 200", "POST /mcp 200"})
	require.Equal(t, "POST /mcp 401", got.Requests[0], "discovery starts from the server's challenge")
	require.Contains(t, auditLines(t, env), `"identity":"`+identity+`"`, "the audit names subject and issuer")
}

func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestIdentityRulesPerSubject: two subjects of the same provider, with
// real tokens, get different tool lists and limits from one server, as
// its identities rules say; the audit names each.
func TestIdentityRulesPerSubject(t *testing.T) {
	idp := testenv.NeedOIDC(t)
	ws, env := workspace(t)
	base, _ := startOAuthServer(t, ws, env, idp.Issuer, "    audience: "+testenv.Audience+"\n",
		"identities:\n  - name: bob-reads\n    match: {subjects: [toolwarden-cc-bob]}\n    allow: [\"read_*\"]\n"+
			"    limits: {max_calls_per_session: 1}\n")
	session := func(clientID string) *client.Client {
		tok := idp.Token(t, idp.Issuer, clientID, "mcp:tools", testenv.Audience)
		c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}))
		require.NoError(t, err)
		require.NoError(t, c.Start(ctxT(t)))
		t.Cleanup(func() { c.Close() })
		initialize(t, c)
		return c
	}
	names := func(c *client.Client) []string {
		list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
		require.NoError(t, err)
		var out []string
		for _, tl := range list.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	read := func(c *client.Client, tool string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, map[string]any{"path": "hello.txt"}
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	alice, bob := session("toolwarden-cc"), session("toolwarden-cc-bob")
	aliceTools, bobTools := names(alice), names(bob)
	require.Contains(t, aliceTools, "list_directory")
	require.NotContains(t, bobTools, "list_directory", "bob's rule allows read_* only")
	require.True(t, slices.ContainsFunc(bobTools, func(n string) bool { return n == "read_file" }))
	for _, n := range bobTools {
		require.True(t, strings.HasPrefix(n, "read_"), n)
	}
	require.Contains(t, read(bob, "list_directory").Content[0].(mcp.TextContent).Text, "identities[bob-reads].allow:not_allowlisted")
	require.False(t, read(bob, "read_file").IsError)
	limited := read(bob, "read_file")
	require.True(t, limited.IsError, "bob's rule lowers max_calls_per_session to 1")
	require.NotNil(t, limited.Meta)
	fields, _ := limited.Meta.AdditionalFields["io.toolwarden/error"].(map[string]any)
	require.Greater(t, fields["retry_after"], float64(0), "the structured error says when to retry: %+v", limited.Meta)
	for range 3 {
		require.False(t, read(alice, "read_file").IsError, "alice keeps the base limits")
	}
	audit := auditLines(t, env)
	require.Contains(t, audit, `"identity":"oauth:toolwarden-cc@`+idp.Issuer+`"`)
	require.Contains(t, audit, `"identity":"oauth:toolwarden-cc-bob@`+idp.Issuer+`"`)
}

// TestPolicyExplainAs decides for a given caller under the identities
// rules, without a provider: a subject, claims, a static identity.
func TestPolicyExplainAs(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cfg := writeConfig(t, ws, "http:\n  identities: [{name: ci, token_env: TW_CI}]\nidentities:\n"+
		"  - {name: readers, match: {scopes: [mcp:read]}, allow: [\"read_*\"]}\n"+
		"  - {name: bob, match: {subjects: [bob]}, deny: [\"list_*\"]}\n"+
		"  - {name: ci-only-tree, match: {identities: [ci]}, allow: [directory_tree]}\n"+
		"  - {name: src, match: {client_ids: [src-bot]}, grant: [\"fs:read:src/**\"]}\n")
	explain := func(as, tool string) (string, int) {
		cmd := exec.Command(binary, "policy", "explain", "--config", cfg, tool, `{"path":"hello.txt"}`, "--as", as)
		cmd.Env = env
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	out, code := explain("bob", "list_directory")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, `identities[bob].deny:"list_*"`)
	out, code = explain("alice", "list_directory")
	require.Equal(t, 0, code, out)
	out, code = explain("sub=carol,scope=mcp:tools,scope=mcp:read", "list_directory")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "identities[readers].allow:not_allowlisted")
	out, code = explain("ci", "read_file")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "identities[ci-only-tree].allow:not_allowlisted")
	out, code = explain("sub=bot,client_id=src-bot", "read_file")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "identities[src].grant")
	_, code = explain("sub=carol,colour=blue", "read_file")
	require.Equal(t, 1, code, "an unknown key is an error")
}
