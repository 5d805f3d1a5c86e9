package httpserve_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// openStream starts GET path with token and returns the response once its
// headers arrived; the stream stays open until the test ends.
func openStream(t *testing.T, url, token string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// TestEventStreamsCappedPerIdentity: an identity holds at most
// MaxStreams event streams open; one more gets 429, another identity is
// not affected, and closing a stream frees its place. A GET /mcp without
// a session is refused at once instead of opening a stream that never
// closes.
func TestEventStreamsCappedPerIdentity(t *testing.T) {
	srv := serve(t, httpserve.Options{
		Token: testToken, Identities: []httpserve.Identity{{Name: "ci", Token: ciToken}},
		MaxBodyBytes: 64 << 10, MaxSessions: 10, IdleTimeout: time.Minute, MaxStreams: 2,
	})

	first := openStream(t, srv.URL+"/sse", testToken)
	require.Equal(t, http.StatusOK, first.StatusCode)
	require.Equal(t, http.StatusOK, openStream(t, srv.URL+"/sse", testToken).StatusCode)
	over := openStream(t, srv.URL+"/sse", testToken)
	require.Equal(t, http.StatusTooManyRequests, over.StatusCode)
	buf := new(strings.Builder)
	_, _ = io.Copy(buf, over.Body)
	require.Contains(t, buf.String(), "http.max_streams_per_identity")
	require.Equal(t, http.StatusOK, openStream(t, srv.URL+"/sse", ciToken).StatusCode, "another identity has its own streams")

	first.Body.Close()
	require.Eventually(t, func() bool {
		res := openStream(t, srv.URL+"/sse", testToken)
		return res.StatusCode == http.StatusOK
	}, 5*time.Second, 50*time.Millisecond, "a closed stream frees its place")

	noSession := openStream(t, srv.URL+"/mcp", ciToken)
	require.Equal(t, http.StatusBadRequest, noSession.StatusCode, "GET /mcp without a session ID does not hang")
}
