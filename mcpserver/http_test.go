package mcpserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools/fs"
)

const testToken = "test-token-0123456789abcdef"

func httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	b := newFixture(t).server(t)
	h, stop := b.HTTPHandler(mcpserver.HTTPOptions{
		Token: testToken, AllowedOrigins: []string{"https://allowed.example"},
		MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		stop(ctxT(t))
		srv.Close()
	})
	return srv
}

var initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestHTTPRejectionsLeakNoSecret: the transport's refusals (and the
// own-origin requests it lets through), made against the guarded server
// over a workspace with a secret beside it, are answered as the transport's
// own test expects, and no answer carries the secret.
func TestHTTPRejectionsLeakNoSecret(t *testing.T) {
	srv := httpServer(t)
	for _, tc := range testenv.HTTPRefusals(srv.URL, testToken, initBody) {
		t.Run(tc.Name, func(t *testing.T) {
			status, body := tc.Send(t, srv.URL)
			require.Equal(t, tc.Status, status, body)
			require.NotContains(t, body, secret)
		})
	}
}

func TestHTTPAllowedOriginAndSessions(t *testing.T) {
	srv := httpServer(t)
	hdr := map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://allowed.example"}
	res := testenv.PostMCP(t, srv.URL+"/mcp", hdr, initBody)
	require.Equal(t, http.StatusOK, res.StatusCode)
	id := res.Header.Get("Mcp-Session-Id")
	require.True(t, strings.HasPrefix(id, "tw-") && len(id) == 67, "session id %q", id)
	hdr["Mcp-Session-Id"] = id
	res = testenv.PostMCP(t, srv.URL+"/mcp", hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, _ := io.ReadAll(res.Body)
	require.Contains(t, string(body), "read_file")
	require.Contains(t, string(body), "write_file", "the default offers the writes, behind approval")

	// The session cap (3) refuses a fourth session.
	delete(hdr, "Mcp-Session-Id")
	testenv.PostMCP(t, srv.URL+"/mcp", hdr, initBody)
	testenv.PostMCP(t, srv.URL+"/mcp", hdr, initBody)
	require.Equal(t, http.StatusServiceUnavailable, testenv.PostMCP(t, srv.URL+"/mcp", hdr, initBody).StatusCode)
}

func TestHTTPClients(t *testing.T) {
	srv := httpServer(t)
	headers := map[string]string{"Authorization": "Bearer " + testToken}
	streamable, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPHeaders(headers))
	require.NoError(t, err)
	sse, err := client.NewSSEMCPClient(srv.URL+"/sse", transport.WithHeaders(headers))
	require.NoError(t, err)
	for name, c := range map[string]*client.Client{"streamable": streamable, "sse": sse} {
		t.Run(name, func(t *testing.T) {
			connect(t, c)
			list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
			require.NoError(t, err)
			require.Contains(t, toolNames(list.Tools), "read_file")
			var out fs.ReadFileOut
			structured(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}), &out)
			require.Equal(t, "hello from toolwarden\n", out.Content)
			require.Equal(t, "invalid_argument.path_outside_workspace",
				string(errorOf(t, callTool(t, c, "read_file", map[string]any{"path": "../secret.txt"})).Code))
		})
	}
}

func TestHTTPSSEWithoutTokenGetsNoStream(t *testing.T) {
	srv := httpServer(t)
	res, err := http.Post(srv.URL+"/message?sessionId=x", "application/json", bytes.NewReader([]byte(initBody)))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// TestSSESessionIDIsNotAudited: an SSE session ID lets whoever holds it
// (and any token) post into that session's stream, so, like the
// streamable HTTP ones, only its digest reaches the audit log.
func TestSSESessionIDIsNotAudited(t *testing.T) {
	f := newFixture(t)
	url := identityServer(t, f)
	c := httpClient(t, url, testToken, true)
	require.False(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}).IsError)
	sse, ok := c.GetTransport().(*transport.SSE)
	require.True(t, ok)
	raw := sse.GetEndpoint().Query().Get("sessionId")
	require.NotEmpty(t, raw)
	data, err := os.ReadFile(f.auditPath)
	require.NoError(t, err)
	require.NotContains(t, string(data), raw)
}
