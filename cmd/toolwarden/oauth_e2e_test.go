package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// startOAuthServer runs the binary with OAuth configured for the real
// provider: its public URL (and so its audience) is known before it
// listens, as a provider's client must be allowed that audience. yaml is
// more config. It returns the base URL.
func startOAuthServer(t *testing.T, ws string, env []string, idp *testenv.OIDC, yaml string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	cfg := writeConfig(t, ws, "http:\n  public_url: "+base+"\n  oauth:\n    issuer: "+idp.Issuer+
		"\n    scopes: [mcp:tools]\n"+yaml)
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
	go func() {
		for sc.Scan() {
		}
	}()
	return base
}

// TestPythonOAuthDiscovery: the official Python SDK, given only the
// server's URL and its client credentials, discovers everything else
// (401 -> protected-resource metadata -> provider metadata -> token)
// and calls a tool through the built binary.
func TestPythonOAuthDiscovery(t *testing.T) {
	py := testenv.Need(t, "TOOLWARDEN_TEST_PYTHON")[0]
	idp := testenv.NeedOIDC(t)
	script, err := filepath.Abs("../../scripts/pyclient/oauth_check.py")
	require.NoError(t, err)
	ws, env := workspace(t)
	base := startOAuthServer(t, ws, env, idp, "")
	client := idp.Client(t, base+"/mcp")
	cmd := exec.Command(py, script, "--url", base+"/mcp", "--issuer", idp.Issuer, "--client-id", client,
		"--client-secret-env", "OAUTH_CHECK_SECRET", "--scope", "mcp:tools")
	cmd.Env = append(env, "OAUTH_CHECK_SECRET="+idp.Secret)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", errOutput(err))
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
	require.Contains(t, auditLines(t, env), `"identity":"oauth:`+client+`@`+idp.Issuer+`"`, "the audit names subject and issuer")
}

func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
