package bridge_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/gemini"
)

// blockingServer has a tool that runs until its context ends, and reports
// that it saw the cancellation.
func blockingServer(started, cancelled chan<- struct{}) *server.MCPServer {
	s := server.NewMCPServer("blocking", "1")
	s.AddTool(mcp.NewTool("long_job", mcp.WithReadOnlyHintAnnotation(true)), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	return s
}

func TestCancelStopsTheToolCall(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	h := newHarness(t, setup{srv: blockingServer(started, cancelled)},
		fake.Reply(fake.Call("b1", "long_job", nil)))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel() // Ctrl-C
	}()
	_, err := h.b.Ask(ctx, "run the long job")
	require.ErrorIs(t, err, context.Canceled)
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool call was not cancelled")
	}
	assert.Empty(t, h.b.History.Contents, "an interrupted prompt leaves no half turn behind")
}

func TestCancelStopsTheModelRequest(t *testing.T) {
	h := newHarness(t, setup{}, fake.Turn{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(h.fake.Requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := h.b.Ask(ctx, "hi")
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, h.fake.Requests(), 1, "a cancelled request is not retried")
}

func TestPerRequestTimeoutIsRetried(t *testing.T) {
	h := newHarness(t, setup{timeout: 50 * time.Millisecond},
		fake.Turn{Hang: true}, fake.Reply(fake.Text("second try")))
	answer, err := h.b.Ask(context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, "second try", answer)
	assert.Len(t, h.fake.Requests(), 2)
}
