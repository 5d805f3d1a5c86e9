package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// send makes one request with token and the headers, and returns the
// status and body.
func send(t *testing.T, method, url, token string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	// A bounded wait: an event stream wrongly granted fails the test
	// instead of hanging it.
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, string(out)
}

// openSession initializes a streamable HTTP session with token.
func openSession(t *testing.T, url, token string) string {
	t.Helper()
	res := testenv.PostMCP(t, url+"/mcp", map[string]string{"Authorization": "Bearer " + token}, initBody)
	require.Equal(t, http.StatusOK, res.StatusCode)
	id := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	return id
}

// sessionRefusals are the audit lines of refused foreign sessions.
func sessionRefusals(t *testing.T, path string) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	for _, line := range audittest.Entries(t, path) {
		if line.Rule == "http.session_identity" {
			out = append(out, line)
		}
	}
	return out
}

// TestStreamableSessionBoundToIdentity: token B with the session ID of
// token A's initialize is refused exactly as an invented ID, on every
// method, and audited; A's session goes on working.
func TestStreamableSessionBoundToIdentity(t *testing.T) {
	f := newFixture(t)
	url := identityServer(t, f)
	a := openSession(t, url, testToken)
	mine := openSession(t, url, ciToken)
	invented := "tw-" + strings.Repeat("ab", 32)

	for _, tc := range []struct{ method, body string }{
		{http.MethodPost, listBody},
		{http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{http.MethodGet, ""},
		{http.MethodDelete, ""},
	} {
		t.Run(tc.method, func(t *testing.T) {
			status, body := send(t, tc.method, url+"/mcp", ciToken, map[string]string{"Mcp-Session-Id": a}, tc.body)
			wantStatus, wantBody := send(t, tc.method, url+"/mcp", ciToken, map[string]string{"Mcp-Session-Id": invented}, tc.body)
			require.Equal(t, http.StatusNotFound, status, body)
			require.Equal(t, wantStatus, status, "as an unknown session")
			require.Equal(t, wantBody, body, "as an unknown session")
			require.NotContains(t, body, "read_file")
		})
	}
	status, body := send(t, http.MethodPost, url+"/mcp", testToken, map[string]string{"Mcp-Session-Id": a}, listBody)
	require.Equal(t, http.StatusOK, status, "A's session survived B's DELETE")
	require.Contains(t, body, "read_file")
	status, _ = send(t, http.MethodPost, url+"/mcp", ciToken, map[string]string{"Mcp-Session-Id": mine}, listBody)
	require.Equal(t, http.StatusOK, status, "B's own session works")

	refused := sessionRefusals(t, f.auditPath)
	require.Len(t, refused, 4, "each refusal is audited")
	for _, e := range refused {
		require.Equal(t, "ci", e.Identity)
		require.Equal(t, guard.Deny, e.Outcome)
		require.Equal(t, "denied.session", e.Code)
		require.True(t, strings.HasPrefix(e.Session, "tw-") && e.Session != a, "a digest, not the ID: %q", e.Session)
	}
	require.NotContains(t, strings.Join(audittest.Lines(t, f.auditPath), "\n"), a)
}

// TestGetStreamOnlyForItsIdentity: A's GET event stream is A's. B asking
// for it gets the 404 of an unknown session and no stream, while A's own
// stream is open; A still gets what its session is sent.
func TestGetStreamOnlyForItsIdentity(t *testing.T) {
	f := newFixture(t)
	url := identityServer(t, f)
	a := openSession(t, url, testToken)

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", a)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "A opens its own stream")

	status, body := send(t, http.MethodGet, url+"/mcp", ciToken, map[string]string{"Mcp-Session-Id": a, "Accept": "text/event-stream"}, "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "Invalid session ID\n", body, "no event of A's")
	require.Len(t, sessionRefusals(t, f.auditPath), 1)

	status, _ = send(t, http.MethodPost, url+"/mcp", testToken, map[string]string{"Mcp-Session-Id": a}, listBody)
	require.Equal(t, http.StatusOK, status, "A's session goes on")
}

// TestSSESessionBoundToIdentity: the message endpoint of A's legacy SSE
// session refuses B's token as an unknown session; A goes on working and
// B's posts never reach A's stream.
func TestSSESessionBoundToIdentity(t *testing.T) {
	f := newFixture(t)
	url := identityServer(t, f)
	c := httpClient(t, url, testToken, true)
	sse, ok := c.GetTransport().(*transport.SSE)
	require.True(t, ok)
	endpoint := sse.GetEndpoint().String()
	call := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`

	status, body := send(t, http.MethodPost, endpoint, ciToken, nil, call)
	require.Equal(t, http.StatusNotFound, status, body)
	invented := strings.Replace(endpoint, sse.GetEndpoint().Query().Get("sessionId"), "sse-"+strings.Repeat("cd", 32), 1)
	wantStatus, wantBody := send(t, http.MethodPost, invented, ciToken, nil, call)
	require.Equal(t, wantStatus, status, "as an unknown session")
	require.Equal(t, wantBody, body, "as an unknown session")

	res := callTool(t, c, "read_file", map[string]any{"path": "hello.txt"})
	require.False(t, res.IsError, "A's session goes on")
	refused := sessionRefusals(t, f.auditPath)
	require.Len(t, refused, 1)
	require.Equal(t, "ci", refused[0].Identity)
	require.True(t, strings.HasPrefix(refused[0].Session, "sse-"))
	for _, e := range audittest.Entries(t, f.auditPath) {
		if e.Identity == "ci" {
			require.Equal(t, "http.session_identity", e.Rule, "B ran nothing in A's session: %+v", e)
		}
	}
}

// TestHTTPStatusCodes: the transport spec's status for each fault.
func TestHTTPStatusCodes(t *testing.T) {
	f := newFixture(t)
	url := identityServer(t, f)
	a := openSession(t, url, testToken)
	modern := map[string]string{mcp.HeaderProtocolVersion: mcp.ProtocolVersion20260728}
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		status int
	}{
		{"text/plain POST", http.MethodPost, "/mcp", map[string]string{"Content-Type": "text/plain"}, initBody, http.StatusUnsupportedMediaType},
		{"no content type", http.MethodPost, "/mcp", map[string]string{"Content-Type": ""}, initBody, http.StatusUnsupportedMediaType},
		{"form POST", http.MethodPost, "/mcp", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, listBody, http.StatusUnsupportedMediaType},
		{"text/plain to SSE message", http.MethodPost, "/message?sessionId=x", map[string]string{"Content-Type": "text/plain"}, listBody, http.StatusUnsupportedMediaType},
		{"json with charset", http.MethodPost, "/mcp", map[string]string{"Content-Type": "application/json; charset=utf-8"}, initBody, http.StatusOK},
		{"request without session", http.MethodPost, "/mcp", nil, listBody, http.StatusBadRequest},
		{"notification without session", http.MethodPost, "/mcp", nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusBadRequest},
		{"GET without session", http.MethodGet, "/mcp", nil, "", http.StatusBadRequest},
		{"DELETE without session", http.MethodDelete, "/mcp", nil, "", http.StatusBadRequest},
		{"unknown session", http.MethodPost, "/mcp", map[string]string{"Mcp-Session-Id": "tw-" + strings.Repeat("00", 32)}, listBody, http.StatusNotFound},
		{"unknown session GET", http.MethodGet, "/mcp", map[string]string{"Mcp-Session-Id": "made-up"}, "", http.StatusNotFound},
		{"own session", http.MethodPost, "/mcp", map[string]string{"Mcp-Session-Id": a}, listBody, http.StatusOK},
		{"initialize needs none", http.MethodPost, "/mcp", nil, initBody, http.StatusOK},
		{"client response needs none", http.MethodPost, "/mcp", nil, `{"jsonrpc":"2.0","id":7,"result":{}}`, http.StatusAccepted},
		{"2026 GET is mcp-go's 405", http.MethodGet, "/mcp", modern, "", http.StatusMethodNotAllowed},
		{"unknown SSE session", http.MethodPost, "/message?sessionId=sse-nope", nil, listBody, http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := send(t, tc.method, url+tc.path, testToken, tc.hdr, tc.body)
			require.Equal(t, tc.status, status, body)
		})
	}
	t.Run("2026 request needs no session", func(t *testing.T) {
		require.Contains(t, postStateless(t, url, testToken), "hello from toolwarden")
	})
	require.Empty(t, sessionRefusals(t, f.auditPath), "an unknown session is not another identity's")
}
