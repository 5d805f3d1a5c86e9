package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// TestForeignGetDuringRunningCall: while A's call runs and reports
// progress on A's GET event stream, B asking for that stream with A's
// session ID gets the 404 of an unknown session and none of A's events;
// A's stream goes on carrying A's progress.
func TestForeignGetDuringRunningCall(t *testing.T) {
	testenv.Root(t)
	f := newFixture(t)
	withExec(t, f)
	b := f.server(t)
	for _, u := range b.Unavailable {
		if u.Toolset == "exec" {
			testenv.Missing(t, "exec unavailable: %s", u.Reason)
		}
	}
	h, stop := b.HTTPHandler(mcpserver.HTTPOptions{
		Token: testToken, Identities: []mcpserver.Identity{{Name: "ci", Token: ciToken}},
		MaxBodyBytes: 64 << 10, MaxSessions: 10, IdleTimeout: time.Minute,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { stop(ctxT(t)); srv.Close() })

	// The legacy GET stream is what is under test.
	//lint:ignore SA1019 the GET event stream of the session-based protocol is the subject
	a, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithContinuousListening(),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testToken}))
	require.NoError(t, err)
	var mu sync.Mutex
	progress := 0
	a.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progress++
			mu.Unlock()
		}
	})
	connect(t, a)
	sid := a.GetTransport().(*transport.StreamableHTTP).GetSessionId()
	require.NotEmpty(t, sid)

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_script"
	req.Params.Arguments = map[string]any{"interpreter": "bash", "script": "sleep 1000"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "a-1"}
	done := make(chan struct{})
	go func() { _, _ = a.CallTool(ctx, req); close(done) }()
	seen := func() int { mu.Lock(); defer mu.Unlock(); return progress }
	require.Eventually(t, func() bool { return seen() > 0 }, 20*time.Second, 50*time.Millisecond, "A's call reports progress")

	status, body := send(t, http.MethodGet, srv.URL+"/mcp", ciToken, map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}, "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "Invalid session ID\n", body, "none of A's events")
	before := seen()
	require.Eventually(t, func() bool { return seen() > before }, 20*time.Second, 50*time.Millisecond, "A still gets its progress")
	require.Len(t, sessionRefusals(t, f.auditPath), 1)
	cancel()
	<-done
}
