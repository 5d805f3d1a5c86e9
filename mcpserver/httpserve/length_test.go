package httpserve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
)

// bigText is the text of the "big" tool's answer: more than net/http
// buffers before it must choose between a length and chunks (2 KiB).
var bigText = strings.Repeat("0123456789abcdef", 512)

// TestJSONAnswersCarryTheirLength: an answer written as JSON carries its
// Content-Length, also one too big for net/http to have measured it
// (which it then sent in chunks: three writes to the connection where
// two do, and a client that reads to the last chunk); the answer's body
// and status are as before, an event stream stays an event stream, and a
// notification's 202 stays a 202.
func TestJSONAnswersCarryTheirLength(t *testing.T) {
	s := notifyingServer()
	s.MCP.AddTool(mcp.NewTool("big"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(bigText), nil
	})
	srv := serveServer(t, s, httpserve.Options{Token: testToken, MaxBodyBytes: 64 << 10, MaxSessions: 3, IdleTimeout: time.Minute})
	for _, revision := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(revision, func(t *testing.T) {
			hdr := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Protocol-Version": revision}
			meta := `,"_meta":{"progressToken":"p"}`
			if revision == "2026-07-28" {
				meta = `,"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
			} else {
				init := testenv.PostMCP(t, srv.URL+"/mcp", hdr, initBody)
				require.Equal(t, http.StatusOK, init.StatusCode)
				hdr["Mcp-Session-Id"] = init.Header.Get("Mcp-Session-Id")
				notified := testenv.PostMCP(t, srv.URL+"/mcp", hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				require.Equal(t, http.StatusAccepted, notified.StatusCode, "a notification's answer")
			}
			call := func(name string) (*http.Response, []byte) {
				if revision == "2026-07-28" {
					hdr["Mcp-Method"], hdr["Mcp-Name"] = "tools/call", name
				}
				res := testenv.PostMCP(t, srv.URL+"/mcp", hdr, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`"`+meta+`}}`)
				body, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				return res, body
			}

			res, body := call("big")
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			assert.Empty(t, res.TransferEncoding, "not chunked")
			assert.Equal(t, int64(len(body)), res.ContentLength, "the answer's length is declared")
			var answer struct {
				ID     int                `json:"id"`
				Result mcp.CallToolResult `json:"result"`
			}
			require.NoError(t, json.Unmarshal(body, &answer))
			assert.Equal(t, 7, answer.ID)
			require.Len(t, answer.Result.Content, 1)
			assert.Equal(t, bigText, answer.Result.Content[0].(mcp.TextContent).Text)

			// An error answer keeps its status (2026-07-28 maps its code).
			res, body = call("no_such_tool")
			assert.Contains(t, string(body), `"error":`)
			assert.Equal(t, int64(len(body)), res.ContentLength)
			if revision == "2026-07-28" {
				assert.NotEqual(t, http.StatusOK, res.StatusCode, "the error's status: %s", body)
			} else {
				assert.Equal(t, http.StatusOK, res.StatusCode)
			}

			// A call that sends notifications is answered on an event
			// stream, whose length nobody knows.
			res, body = call("notify")
			assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
			assert.Equal(t, int64(-1), res.ContentLength)
			assert.Contains(t, string(body), `"result":`)
		})
	}
}
