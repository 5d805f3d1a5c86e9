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

func post(t *testing.T, url string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestHTTPRejections(t *testing.T) {
	srv := httpServer(t)
	auth := "Bearer " + testToken
	cases := []struct {
		name   string
		path   string
		hdr    map[string]string
		body   string
		status int
	}{
		{"no token", "/mcp", nil, initBody, http.StatusUnauthorized},
		{"wrong token", "/mcp", map[string]string{"Authorization": "Bearer nope-nope-nope-nope"}, initBody, http.StatusUnauthorized},
		{"token prefix only", "/mcp", map[string]string{"Authorization": "Bearer " + testToken[:10]}, initBody, http.StatusUnauthorized},
		{"no token on sse", "/sse", nil, "", http.StatusUnauthorized},
		{"foreign origin", "/mcp", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, initBody, http.StatusForbidden},
		{"null origin", "/mcp", map[string]string{"Authorization": auth, "Origin": "null"}, initBody, http.StatusForbidden},
		{"foreign origin on sse message", "/message?sessionId=x", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, initBody, http.StatusForbidden},
		{"rebinding host", "/mcp", map[string]string{"Authorization": auth, "Host": "evil.example:8080"}, initBody, http.StatusForbidden},
		{"body too large", "/mcp", map[string]string{"Authorization": auth}, `{"x":"` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge},
		{"invented session id", "/mcp", map[string]string{"Authorization": auth, "Mcp-Session-Id": "tw-" + strings.Repeat("ab", 32)},
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.StatusNotFound},
		{"mcp-go style session id", "/mcp", map[string]string{"Authorization": auth, "Mcp-Session-Id": "mcp-session-0b1e4f2c-2f6e-4c1a-9d57-3c2d1a0e9f11"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.StatusNotFound},
		{"forged sse session", "/message?sessionId=0b1e4f2c-2f6e-4c1a-9d57-3c2d1a0e9f11", map[string]string{"Authorization": auth},
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.StatusNotFound},
	}
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	cases = append(cases, []struct {
		name   string
		path   string
		hdr    map[string]string
		body   string
		status int
	}{
		{"loopback origin of another port", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://localhost:1"}, initBody, http.StatusForbidden},
		{"loopback origin without port", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://127.0.0.1"}, initBody, http.StatusForbidden},
		{"rebound name on our port", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://evil.example:" + port}, initBody, http.StatusForbidden},
		{"loopback origin with a path", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://localhost:" + port + "/x"}, initBody, http.StatusForbidden},
		{"own origin on localhost", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://localhost:" + port}, initBody, http.StatusOK},
		{"own origin on 127.0.0.1", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://127.0.0.1:" + port}, initBody, http.StatusOK},
		{"own origin on [::1]", "/mcp", map[string]string{"Authorization": auth, "Origin": "http://[::1]:" + port}, initBody, http.StatusOK},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var res *http.Response
			if tc.body == "" {
				req, err := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
				require.NoError(t, err)
				res, err = http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
			} else {
				res = post(t, srv.URL+tc.path, tc.hdr, tc.body)
			}
			body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			require.Equal(t, tc.status, res.StatusCode, string(body))
			require.NotContains(t, string(body), secret)
		})
	}
}

func TestHTTPAllowedOriginAndSessions(t *testing.T) {
	srv := httpServer(t)
	hdr := map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://allowed.example"}
	res := post(t, srv.URL+"/mcp", hdr, initBody)
	require.Equal(t, http.StatusOK, res.StatusCode)
	id := res.Header.Get("Mcp-Session-Id")
	require.True(t, strings.HasPrefix(id, "tw-") && len(id) == 67, "session id %q", id)
	hdr["Mcp-Session-Id"] = id
	res = post(t, srv.URL+"/mcp", hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, _ := io.ReadAll(res.Body)
	require.Contains(t, string(body), "read_file")
	require.Contains(t, string(body), "write_file", "the default offers the writes, behind approval")

	// The session cap (3) refuses a fourth session.
	delete(hdr, "Mcp-Session-Id")
	post(t, srv.URL+"/mcp", hdr, initBody)
	post(t, srv.URL+"/mcp", hdr, initBody)
	require.Equal(t, http.StatusServiceUnavailable, post(t, srv.URL+"/mcp", hdr, initBody).StatusCode)
}

func TestHTTPHostileBodies(t *testing.T) {
	srv := httpServer(t)
	hdr := map[string]string{"Authorization": "Bearer " + testToken}
	nested := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	for _, body := range []string{"{", "not json", `[]`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + nested + `}`, nested} {
		res := post(t, srv.URL+"/mcp", hdr, body)
		require.Less(t, res.StatusCode, 500, "body %.40q", body)
	}
	require.Equal(t, http.StatusOK, post(t, srv.URL+"/mcp", hdr, initBody).StatusCode, "server still serves")
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
