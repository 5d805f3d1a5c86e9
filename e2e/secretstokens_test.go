package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// serveHTTPLogged starts `serve --http` with env as it is (no
// TOOLWARDEN_HTTP_TOKEN added), its stderr in a file, and returns the
// base URL and a reader of that log.
func serveHTTPLogged(t *testing.T, env []string, args ...string) (string, func() string) {
	t.Helper()
	addr := freePort(t)
	logPath := filepath.Join(t.TempDir(), "stderr.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(binary, append([]string{"serve", "--http", addr}, args...)...)
	cmd.Env, cmd.Stderr = env, logFile
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done); logFile.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	read := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !strings.Contains(read(), "serving HTTP"); time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("server exited: %s", read())
		default:
		}
	}
	require.Contains(t, read(), "serving HTTP")
	return "http://" + addr, read
}

// TestSecretsTokensBinary: the built binary serves HTTP with its bearer
// token from http.token_vault (a real dev-mode OpenBao), an identity's
// from a 0600 token_file, and a declared http tool whose API key comes
// from api_key_vault and a header from a 0600 file. Every token and key
// works, and none of them, nor the Vault token, is in the debug log or
// the audit log.
func TestSecretsTokensBinary(t *testing.T) {
	bao := testenv.StartOpenBao(t)
	const (
		mainToken = "main-token-from-openbao-0123"
		opsToken  = "ops-token-from-a-file-4567"
		apiKey    = "sk-declared-from-openbao-89ab"
		tenant    = "tenant-from-a-file-cdef"
	)
	bao.Put(t, "secret/data/toolwarden", map[string]string{"http_token": mainToken, "lookup_key": apiKey})
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+apiKey || r.Header.Get("X-Tenant") != tenant {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("definition of " + r.URL.Query().Get("word")))
	}))
	defer endpoint.Close()
	ws, env := workspace(t)
	vaultToken := writePrivate(t, ws, "bao-token", bao.RootToken+"\n", 0o600)
	opsFile := writePrivate(t, ws, "ops-token", opsToken+"\n", 0o600)
	tenantFile := writePrivate(t, ws, "tenant", tenant+"\n", 0o600)
	cfg := writeConfig(t, ws, "log:\n  level: debug\npolicy:\n  allow: [read_file, lookup]\n"+
		"secrets:\n  vault:\n    address: "+bao.Address+"\n    token_file: "+vaultToken+"\n"+
		"http:\n  token_vault: secret/data/toolwarden#http_token\n  identities: [{name: ops, token_file: "+opsFile+"}]\n"+
		"tools:\n  - name: lookup\n    description: Look a word up.\n    type: http\n    base_url: "+endpoint.URL+"/define\n"+
		"    requires_approval: false\n    api_key_vault: secret/data/toolwarden#lookup_key\n"+
		"    header_env: [{name: X-Tenant, file: "+tenantFile+"}]\n"+
		"    params: [{name: word, type: string, required: true, pattern: \"[a-z]+\"}]\n")
	base, serverLog := serveHTTPLogged(t, env, "--config", cfg)

	call := func(token, tool string, args map[string]any) (*mcp.CallToolResult, error) {
		c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		require.NoError(t, err)
		if err := c.Start(ctxT(t)); err != nil {
			return nil, err
		}
		defer c.Close()
		if _, err := c.Initialize(ctxT(t), mcp.InitializeRequest{}); err != nil {
			return nil, err
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		return c.CallTool(ctxT(t), req)
	}
	res, err := call(mainToken, "lookup", map[string]any{"word": "sandbox"})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "definition of sandbox")
	res, err = call(opsToken, "read_file", map[string]any{"path": "hello.txt"})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	_, err = call("not-a-configured-token-0000", "read_file", map[string]any{"path": "hello.txt"})
	require.Error(t, err, "an unknown token is refused")

	audit := auditText(t, auditPathOf(t, env))
	require.Contains(t, audit, `"identity":"ops"`)
	for _, v := range []string{mainToken, opsToken, apiKey, tenant, bao.RootToken} {
		require.NotContains(t, serverLog(), v, "a secret reached the debug log")
		require.NotContains(t, audit, v, "a secret reached the audit log")
	}
}

// TestSecretsTokenFileModeBinary: a bearer token file others may read
// is refused at start naming http.token_file; `config check` says so.
func TestSecretsTokenFileModeBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	loose := writePrivate(t, ws, "token", "loose-token-0123456789abcdef\n", 0o644)
	cfg := writeConfig(t, ws, "http:\n  token_file: "+loose+"\n")
	out, err := runAll(t, env, "config", "check", "--config", cfg)
	require.Error(t, err)
	require.Contains(t, out, "http.token_file: "+loose+" has mode 0644: a secret file must be 0600 or stricter")
	out, err = runAll(t, env, "serve", "--http", freePort(t), "--config", cfg)
	require.Error(t, err)
	require.Contains(t, out, "http.token_file")
	require.NotContains(t, out, "loose-token-0123456789abcdef")
}
