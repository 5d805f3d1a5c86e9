package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/stretchr/testify/require"
)

// logTail collects a process's stderr lines.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startHTTPLogged is startHTTP that keeps the server's log.
func startHTTPLogged(t *testing.T, ws string, env []string) (string, *logTail) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(binary, "serve", "--workspace", ws, "--http", addr)
	cmd.Env = append(env, "TOOLWARDEN_HTTP_TOKEN=e2e-token-0123456789")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	tail, started := &logTail{}, make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			tail.mu.Lock()
			tail.lines = append(tail.lines, sc.Text())
			tail.mu.Unlock()
			if strings.Contains(sc.Text(), "serving HTTP") {
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start:\n" + tail.String())
	}
	return "http://" + addr, tail
}

// rawHTTP sends one request as token and returns status, body and the
// session ID header of the answer.
func rawHTTP(t *testing.T, method, url, token, contentType, session, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, string(out), res.Header.Get("Mcp-Session-Id")
}

// TestHTTPSessionIdentityBinary: with two identities configured, the
// built binary serves a session only to the identity that opened it,
// over streamable HTTP and legacy SSE, and answers each transport fault
// with its status code.
func TestHTTPSessionIdentityBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cfg := writeConfig(t, ws, "http:\n  identities: [{name: ci, token_env: TW_TEST_CI_TOKEN}]\n")
	env = append(env, "TOOLWARDEN_CONFIG="+cfg, "TW_TEST_CI_TOKEN=ci-token-0123456789abcdef")
	base, log := startHTTPLogged(t, ws, env)
	tokA, tokB := "e2e-token-0123456789", "ci-token-0123456789abcdef"
	const js = "application/json"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`

	status, _, a := rawHTTP(t, http.MethodPost, base+"/mcp", tokA, js, "", init)
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, a)

	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		status, body, _ := rawHTTP(t, m, base+"/mcp", tokB, js, a, call)
		require.Equal(t, http.StatusNotFound, status, "%s with B's token and A's session: %s", m, body)
		require.Equal(t, "Invalid session ID\n", body)
	}
	status, body, _ := rawHTTP(t, http.MethodPost, base+"/mcp", tokA, js, a, call)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "hello from toolwarden", "A's session goes on")

	sse, err := client.NewSSEMCPClient(base+"/sse", transport.WithHeaders(map[string]string{"Authorization": "Bearer " + tokA}))
	require.NoError(t, err)
	require.NoError(t, sse.Start(ctxT(t)))
	defer sse.Close()
	initialize(t, sse)
	endpoint := sse.GetTransport().(*transport.SSE).GetEndpoint().String()
	status, body, _ = rawHTTP(t, http.MethodPost, endpoint, tokB, js, "", call)
	require.Equal(t, http.StatusNotFound, status, body)
	readHello(t, sse)

	for _, tc := range []struct {
		name, contentType, session, body string
		status                           int
	}{
		{"text/plain", "text/plain", a, call, http.StatusUnsupportedMediaType},
		{"no session", js, "", call, http.StatusBadRequest},
		{"unknown session", js, "tw-" + strings.Repeat("0", 64), call, http.StatusNotFound},
	} {
		status, body, _ := rawHTTP(t, http.MethodPost, base+"/mcp", tokA, tc.contentType, tc.session, tc.body)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, body)
	}

	audit := auditLines(t, env)
	require.Equal(t, 4, strings.Count(audit, `"rule":"http.session_identity"`), audit)
	require.Contains(t, audit, `"identity":"ci"`)
	require.NotContains(t, audit, a, "the session ID itself is never written")
	require.Eventually(t, func() bool { return strings.Count(log.String(), "rule=http.session_identity") == 4 }, 5*time.Second, 50*time.Millisecond, log.String())
	require.NotContains(t, log.String(), a)
}
