package upstream

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestCappedBody: a JSON body is one message, capped whole; in an event
// stream each event (up to a blank line, \n or \r\n) is, so that a long
// stream of small events passes and one big event does not. The first
// byte over the cap fails the read, once, and closes the body.
func TestCappedBody(t *testing.T) {
	events := strings.Repeat("data: "+strings.Repeat("x", 20)+"\r\n\r\n", 100)
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
		cut    bool
	}{
		{"body at the cap", strings.Repeat("a", 32), false, false},
		{"body over the cap", strings.Repeat("a", 33), false, true},
		{"many small events", events, true, false},
		{"one event over the cap", "data: " + strings.Repeat("y", 20) + "\ndata: " + strings.Repeat("y", 20) + "\n\n", true, true},
		{"lines without a blank one", strings.Repeat("data: z\n", 10), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var over []*MessageTooLargeError
			rc := &closeCount{Reader: iotest{strings.NewReader(tc.body), 7}}
			b := &cappedBody{rc: rc, max: 32, stream: tc.stream, over: func(e *MessageTooLargeError) { over = append(over, e) }}
			got, err := io.ReadAll(b)
			if !tc.cut {
				require.NoError(t, err)
				require.Equal(t, tc.body, string(got))
				require.Empty(t, over)
				return
			}
			var tooLarge *MessageTooLargeError
			require.True(t, errors.As(err, &tooLarge), "%v", err)
			require.Contains(t, err.Error(), "longer than 32 bytes (upstreams[].max_message_bytes); the response was cut unread")
			require.Len(t, over, 1)
			require.Equal(t, 1, rc.closed)
			_, again := b.Read(make([]byte, 8))
			require.Equal(t, err, again, "a cut body stays cut")
		})
	}
}

type closeCount struct {
	io.Reader
	closed int
}

func (c *closeCount) Close() error { c.closed++; return nil }

// TestSSEMessageCapEndsSession is the attack over the SSE transport: an
// answer over max_message_bytes arrives on the one event stream, which is
// cut; the call gets backend.unavailable naming the key, the upstream is
// reported down (TooLarge) and connected again, and its calls work.
func TestSSEMessageCapEndsSession(t *testing.T) {
	s := server.NewMCPServer("legacy", "1.0.0")
	s.AddTool(mcp.NewTool("big", mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("B", 256<<10)), nil
		})
	s.AddTool(mcp.NewTool("small", mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("fine"), nil
		})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = server.NewSSEServer(s, server.WithBaseURL("http://"+srv.Listener.Addr().String()))
	srv.Start()
	t.Cleanup(srv.Close)

	u := configs.Upstream{Name: "legacy", URL: srv.URL + "/sse", Transport: configs.TransportSSE, MaxMessageBytes: 64 << 10}
	c, err := Connect(context.Background(), u, Options{Version: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	events := make(chan Event, 8)
	c.OnEvent(func(e Event) { events <- e })
	call := func(name string) *mcp.CallToolResult {
		for _, tool := range c.Tools() {
			if tool.Tool.Name == "legacy__"+name {
				res, err := tool.Handler(context.Background(), mcp.CallToolRequest{})
				require.NoError(t, err)
				return res
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}
	res := call("big")
	e, ok := toolerr.FromResult(res)
	require.True(t, ok, "%+v", res.Content)
	require.Equal(t, toolerr.BackendUnavailable, e.Code)
	require.Contains(t, e.Message, "longer than 65536 bytes (upstreams[].max_message_bytes)")
	down := <-events
	require.Equal(t, EventDown, down.Kind)
	require.True(t, down.TooLarge)
	timeout := time.After(2 * time.Minute)
	for restarted := false; !restarted; {
		select {
		case e := <-events:
			restarted = e.Kind == EventRestarted
		case <-timeout:
			t.Fatal("no reconnection")
		}
	}
	res = call("small")
	require.False(t, res.IsError, "%+v", res.Content)
}
