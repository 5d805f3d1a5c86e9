package mcpserver

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/toolerr"
)

// TestHandlerGoroutines: handlers run on reused goroutines; one that does
// not return holds up no other call, a panic fails only its call, and no
// more than maxIdleHandlers goroutines stay waiting after a burst.
func TestHandlerGoroutines(t *testing.T) {
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	release := make(chan struct{})
	stuck := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-release
		return mcp.NewToolResultText("late"), nil
	}
	boom := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("tool bug") }
	ctx := context.Background()

	stuckDone := startHandler(ctx, stuck, mcp.CallToolRequest{})
	for range 3 {
		r := <-startHandler(ctx, ok, mcp.CallToolRequest{})
		require.NoError(t, r.err)
		require.Equal(t, "ok", r.res.Content[0].(mcp.TextContent).Text)
	}
	r := <-startHandler(ctx, boom, mcp.CallToolRequest{})
	require.Equal(t, toolerr.Internal, toolerr.CodeOf(r.err))
	r = <-startHandler(ctx, ok, mcp.CallToolRequest{})
	require.NoError(t, r.err, "a goroutine that recovered a panic serves on")

	var wg sync.WaitGroup
	for range 4 * maxIdleHandlers {
		wg.Go(func() {
			r := <-startHandler(ctx, ok, mcp.CallToolRequest{})
			require.NoError(t, r.err)
		})
	}
	wg.Wait()
	require.LessOrEqual(t, idleCount.Load(), int32(maxIdleHandlers))

	close(release)
	r = <-stuckDone
	require.Equal(t, "late", r.res.Content[0].(mcp.TextContent).Text, "the stuck handler still delivers its result")
}
