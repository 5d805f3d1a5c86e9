package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestHandlerGoroutines: handlers run on reused goroutines and jobs; one
// that does not return holds up no other call, a panic fails only its
// call, each handler sees its own request however jobs are recycled, and
// no more than maxIdleHandlers goroutines stay waiting after a burst.
func TestHandlerGoroutines(t *testing.T) {
	ok := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.Name != "" {
			return mcp.NewToolResultText(req.Params.Name), nil
		}
		return mcp.NewToolResultText("ok"), nil
	}
	run := func(h func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error), name string) handlerReturn {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		j := startHandler(context.Background(), h, req)
		r := <-j.done
		j.release()
		return r
	}
	release := make(chan struct{})
	stuck := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-release
		return mcp.NewToolResultText("late"), nil
	}
	boom := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("tool bug") }
	ctx := context.Background()

	stuckJob := startHandler(ctx, stuck, mcp.CallToolRequest{})
	for range 3 {
		r := run(ok, "")
		require.NoError(t, r.err)
		require.Equal(t, "ok", r.res.Content[0].(mcp.TextContent).Text)
	}
	r := run(boom, "")
	require.Equal(t, toolerr.Internal, toolerr.CodeOf(r.err))
	r = run(ok, "")
	require.NoError(t, r.err, "a goroutine that recovered a panic serves on")

	var wg sync.WaitGroup
	for i := range 4 * maxIdleHandlers {
		wg.Go(func() {
			name := fmt.Sprintf("call-%d", i)
			r := run(ok, name)
			require.NoError(t, r.err)
			require.Equal(t, name, r.res.Content[0].(mcp.TextContent).Text, "a recycled job carries its own call")
		})
	}
	wg.Wait()
	require.LessOrEqual(t, idleCount.Load(), int32(maxIdleHandlers))

	close(release)
	r = <-stuckJob.done
	require.Equal(t, "late", r.res.Content[0].(mcp.TextContent).Text, "the stuck handler still delivers its result")
}
