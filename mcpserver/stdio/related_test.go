package stdio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// TestCallNotificationsBeforeAnswer: every progress notification a call
// sends, the last one sent just before its handler returns included, is
// written before the call's answer, and the handler's session is still
// the stdio session in all but that (client info, revision, elicitation).
func TestCallNotificationsBeforeAnswer(t *testing.T) {
	const calls, notes = 20, 10
	srv := server.NewMCPServer("bare", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("notify"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s := server.ServerFromContext(ctx)
		for i := range notes {
			if err := s.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1,
			}); err != nil {
				return nil, err
			}
		}
		cs := server.ClientSessionFromContext(ctx)
		info, _ := cs.(server.SessionWithClientInfo)
		_, elicits := cs.(server.SessionWithElicitation)
		rev, _ := cs.(server.SessionWithProtocolVersion)
		return mcp.NewToolResultText(fmt.Sprintf("%s %v %s", info.GetClientInfo().Name, elicits, rev.ProtocolVersion())), nil
	})
	in := handshake
	for i := range calls {
		in += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"notify","_meta":{"progressToken":"p%d"}}}`+"\n", i+1, i+1)
	}
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(in))
		// Input stays open until the test has read every answer.
	}()
	r, w := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(ctx, srv, pr, w, os.Stderr) }()

	seen := map[string]int{}
	dec := json.NewDecoder(r)
	for answered := 0; answered < calls; {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProgressToken string `json:"progressToken"`
			} `json:"params"`
			Result *mcp.CallToolResult `json:"result"`
		}
		require.NoError(t, dec.Decode(&m))
		switch {
		case m.Method == "notifications/progress":
			seen[m.Params.ProgressToken]++
		case string(m.ID) != "0" && m.Result != nil:
			require.Equal(t, notes, seen["p"+string(m.ID)], "call %s: all its notifications before its answer", m.ID)
			require.Equal(t, "t true 2025-11-25", m.Result.Content[0].(mcp.TextContent).Text)
			answered++
		}
	}
	_ = pw.Close()
	require.NoError(t, <-done)
}

// TestStandInAfterNotifications: a call answered by a stand-in (its
// handler outlived its deadline) has the notifications its handler sent
// before written ahead of that answer, and none it sends after: the
// client is done with the call.
func TestStandInAfterNotifications(t *testing.T) {
	late := make(chan struct{})
	srv := server.NewMCPServer("bare", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("stuck"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s := server.ServerFromContext(ctx)
		progress := func(n int) {
			_ = s.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": "p", "progress": n})
		}
		progress(1)
		defer close(late)
		turn, ok := stdio.TurnOf(ctx)
		if !ok {
			t.Error("a stdio worker's call has no Turn")
			return nil, fmt.Errorf("no turn")
		}
		turn.StandIn(mcp.NewToolResultText("stood in"))
		progress(2) // after the answer: not written
		return mcp.NewToolResultText("too late"), nil
	})
	in := handshake + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck","_meta":{"progressToken":"p"}}}` + "\n"
	pr, pw := io.Pipe()
	go func() { _, _ = pw.Write([]byte(in)) }()
	r, w := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(ctx, srv, pr, w, os.Stderr) }()
	lines := make(chan string, 16)
	go func() {
		dec := json.NewDecoder(r)
		for {
			var m json.RawMessage
			if dec.Decode(&m) != nil {
				close(lines)
				return
			}
			lines <- string(m)
		}
	}()
	var got []string
	for l := range lines {
		if !json.Valid([]byte(l)) || l == "" {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		if string(m.ID) == "0" {
			continue // the handshake's answer
		}
		got = append(got, m.Method+string(m.ID))
		if string(m.ID) == "1" {
			break
		}
	}
	<-late
	require.Equal(t, []string{"notifications/progress", "1"}, got, "the progress sent before, then the stand-in's answer")
	_ = pw.Close()
	require.NoError(t, <-done)
	_ = w.Close()
	for l := range lines {
		require.NotContains(t, l, "notifications/progress", "a notification sent after the answer was written")
	}
}
