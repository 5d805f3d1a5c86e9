package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
)

// TestUpstreamStructuredOutputFiltered is the attack on the structured
// output: an upstream puts a credential in its structuredContent (and in
// its text copy). Both reach the client redacted: mcp-go's client keeps
// the upstream's raw structuredContent beside the decoded value, and the
// stdio answer must not be written from those raw bytes.
func TestUpstreamStructuredOutputFiltered(t *testing.T) {
	t.Parallel()
	const key = "AKIAQ3XW7PLM2VNK5RTY"
	s := server.NewMCPServer("remote", "1.0.0")
	s.AddTool(mcp.NewTool("report", mcp.WithDescription("Reports the service status."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out := map[string]any{"status": "up", "note": "aws_access_key_id = " + key}
			b, _ := json.Marshal(out)
			return mcp.NewToolResultStructured(out, string(b)), nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	defer srv.Close()
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: ["remote__*"]
upstreams:
  - name: remote
    url: `+srv.URL+`/mcp
`)
	c, _ := serveUpstream(t, ws, env, file)
	res := callUpstream(t, c, "remote__report", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	require.NotContains(t, text(t, res), key)
	sc, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Contains(t, string(sc), `"status":"up"`)
	require.Contains(t, string(sc), "[REDACTED:")
	require.NotContains(t, string(sc), key, "the structured output left unfiltered")
}
