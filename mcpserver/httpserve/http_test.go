package httpserve_test

import (
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
	for _, tc := range testenv.HTTPRefusals(srv.URL, testToken, initBody) {
		t.Run(tc.Name, func(t *testing.T) {
			status, body := tc.Send(t, srv.URL)
			require.Equal(t, tc.Status, status, body)
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
