package e2e

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
)

// geminiReadHello is the arguments Gemini CLI sent for a read_file call,
// as recorded: it adds wait_for_previous to every tool call.
const geminiReadHello = `{"path":"hello.txt","wait_for_previous":true}`

// TestGeminiControlArgsBinary: over stdio, the built binary drops Gemini
// CLI's wait_for_previous before the strict schema check, audits that it
// did, with the digest of what the tool received, and still refuses any
// other unknown argument; with policy.client_control_args emptied, the
// control argument is refused like any other.
func TestGeminiControlArgsBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	c, err := client.NewStdioMCPClient(binary, append(env, "TOOLWARDEN_LOG_LEVEL=debug"), "serve", "--workspace", ws)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	call := func(args string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "read_file"
		req.Params.Arguments = json.RawMessage(args)
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	res := call(geminiReadHello)
	require.False(t, res.IsError, "%v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello from toolwarden")
	require.False(t, call(`{"path":"hello.txt"}`).IsError)

	res = call(`{"path":"hello.txt","wait_for_previous":true,"wait_for_next":true}`)
	require.True(t, res.IsError, "another unknown argument is still refused")
	text := res.Content[0].(mcp.TextContent).Text
	require.Contains(t, text, "invalid_argument.schema: ")
	require.Contains(t, text, "wait_for_next")

	var entries []audit.Entry
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Outcome != guard.OutcomeStarted {
			entries = append(entries, e)
		}
	}
	require.Len(t, entries, 5, "allowed+completed twice, then denied")
	require.Equal(t, []string{"wait_for_previous"}, entries[0].DroppedArgs)
	require.Equal(t, []string{"wait_for_previous"}, entries[1].DroppedArgs)
	require.Empty(t, entries[2].DroppedArgs)
	require.Equal(t, entries[2].ArgsSHA256, entries[0].ArgsSHA256, "the digest is of what the tool received")
	require.Equal(t, "denied", string(entries[4].Outcome))
	require.Equal(t, []string{"wait_for_previous"}, entries[4].DroppedArgs)

	out, status := runBinary(t, env, "policy", "explain", "--workspace", ws, "read_file", geminiReadHello)
	require.Equal(t, 0, status, out)
	require.Contains(t, out, "dropped client control arguments wait_for_previous")
}

func TestGeminiControlArgsOffBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	cfg := writeConfig(t, ws, "policy:\n  client_control_args: []\n")
	out, status := runBinary(t, env, "call", "--config", cfg, "read_file", geminiReadHello)
	require.NotEqual(t, 0, status)
	res := resultOf(t, out)
	require.True(t, res.IsError)
	text := res.Content[0].(mcp.TextContent).Text
	require.Contains(t, text, "invalid_argument.schema: ")
	require.Contains(t, text, "wait_for_previous")
}
