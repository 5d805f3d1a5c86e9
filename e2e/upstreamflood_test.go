package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// floodBytes is how much the hostile HTTP upstream sends in one message.
const floodBytes = 100 << 20

// floodHandler is a hostile upstream over streamable HTTP: a real MCP
// server, except that a call of flood_json answers with one 100 MB JSON
// body and a call of flood_sse with one 100 MB event, streamed (never
// held by this process). It reports how many bytes of a flood the
// client took.
func floodHandler(t *testing.T, took func(int64)) http.Handler {
	s := server.NewMCPServer("flooder", "1.0.0")
	for _, name := range []string{"flood_json", "flood_sse", "status"} {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("Reports the service status."), mcp.WithReadOnlyHintAnnotation(true)),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("up"), nil
			})
	}
	h := server.NewStreamableHTTPServer(s)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Method != "tools/call" || !strings.HasPrefix(req.Params.Name, "flood_") {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
		if req.Params.Name == "flood_sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			head = "event: message\ndata: " + head
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		took(stream(w, head))
	})
}

// stream writes head and then floodBytes of text, until the client stops
// reading; it returns how many bytes were written.
func stream(w http.ResponseWriter, head string) int64 {
	chunk := bytes.Repeat([]byte("A"), 64<<10)
	n, err := io.WriteString(w, head)
	total := int64(n)
	for err == nil && total < floodBytes {
		n, err = w.Write(chunk)
		total += int64(n)
		w.(http.Flusher).Flush()
	}
	if err == nil {
		_, _ = io.WriteString(w, `"}]}}`+"\n\n")
	}
	return total
}

// TestUpstreamHTTPFloodIsCut is the attack over HTTP: a url upstream that
// answers with a 100 MB body, or a 100 MB event in an event stream, is
// cut at max_message_bytes: the call gets backend.unavailable naming the
// key, the audit has the refusal, the server's memory never holds the
// message, and the upstream's other calls still work.
func TestUpstreamHTTPFloodIsCut(t *testing.T) {
	t.Parallel()
	tookCh := make(chan int64, 4)
	srv := httptest.NewServer(floodHandler(t, func(n int64) { tookCh <- n }))
	defer srv.Close()
	ws, env := workspace(t)
	file := upstreamConfig(t, ws, `
policy:
  allow: ["flooder__*"]
upstreams:
  - name: flooder
    url: `+srv.URL+`/mcp
    max_message_bytes: 1048576
`)
	c, names := serveUpstream(t, ws, env, file)
	require.ElementsMatch(t, []string{"flooder__flood_json", "flooder__flood_sse", "flooder__status"}, names)
	server := serverPid(t, file)
	before := peakRSS(t, server)
	for _, tool := range []string{"flooder__flood_json", "flooder__flood_sse"} {
		res := callUpstream(t, c, tool, nil)
		deniedWith(t, res, toolerr.BackendUnavailable)
		require.Contains(t, text(t, res), "longer than 1048576 bytes (upstreams[].max_message_bytes)", tool)
		took := <-tookCh
		t.Logf("%s: the upstream wrote %d MiB before the cut", tool, took>>20)
		require.Less(t, took, int64(floodBytes), "%s: the flood was read to its end", tool)
	}
	waitFor(t, "the audit line", func() bool {
		return hasOutcome(t, env, "upstream:flooder", guard.OutcomeUpstreamMessageRefused, "upstreams[0].max_message_bytes")
	})
	grew := peakRSS(t, server) - before
	t.Logf("server peak RSS %d MiB before the floods, grew by %d MiB", before>>20, grew>>20)
	require.Less(t, grew, int64(32<<20), "the server held much of a 100 MB message")
	res := callUpstream(t, c, "flooder__status", nil)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Equal(t, "up", text(t, res))
}
