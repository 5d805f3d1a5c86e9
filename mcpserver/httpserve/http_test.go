package httpserve_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// httpServer is the transport as the tests below need it: one allowed
// origin, a 64 KiB body cap, three sessions.
func httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	return serve(t, httpserve.Options{
		Token: testToken, AllowedOrigins: []string{"https://allowed.example"},
		MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute,
	})
}

// TestRejections: requests without a valid token, from a foreign origin
// or Host, with too large a body or an unknown session are refused before
// the server sees them.
func TestRejections(t *testing.T) {
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
				res = testenv.PostMCP(t, srv.URL+tc.path, tc.hdr, tc.body)
			}
			body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			require.Equal(t, tc.status, res.StatusCode, string(body))
		})
	}
}

// TestHostileBodies: bodies that are not JSON-RPC, or nest deeply, get
// a 4xx and leave the server serving.
func TestHostileBodies(t *testing.T) {
	srv := httpServer(t)
	hdr := map[string]string{"Authorization": "Bearer " + testToken}
	nested := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	for _, body := range []string{"{", "not json", `[]`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + nested + `}`, nested} {
		res := testenv.PostMCP(t, srv.URL+"/mcp", hdr, body)
		require.Less(t, res.StatusCode, 500, "body %.40q", body)
	}
	require.Equal(t, http.StatusOK, testenv.PostMCP(t, srv.URL+"/mcp", hdr, initBody).StatusCode, "server still serves")
}
