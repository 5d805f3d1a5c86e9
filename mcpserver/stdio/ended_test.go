package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// endedSession is Serve on pipes, past the handshake and then ended (its
// context cancelled, Serve returned) while the client's input is still
// open: what the binary does on SIGTERM, its output open until it exits.
type endedSession struct {
	in  *io.PipeWriter
	out *bufio.Reader
}

func endSession(t *testing.T) endedSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- stdio.Serve(ctx, bareServer(), inR, outW, os.Stderr) }()
	s := endedSession{in: inW, out: bufio.NewReader(outR)}
	s.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Contains(t, s.next(t), `"result"`, "initialized")
	cancel()
	require.NoError(t, <-served)
	return s
}

func (s endedSession) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(t, err)
}

// next is the next line written, failing the test if none comes within a
// minute (a bound on a hang, not on the time an answer takes).
func (s endedSession) next(t *testing.T) string {
	t.Helper()
	type read struct {
		line string
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := s.out.ReadString('\n')
		got <- read{line, err}
	}()
	select {
	case r := <-got:
		require.NoError(t, r.err)
		return r.line
	case <-time.After(time.Minute):
		t.Fatal("no answer within a minute")
		return ""
	}
}

// TestRequestAfterSessionEndAnswered: a request (a tools/call or a
// subscriptions/listen, served here, or one passed on to mcp-go, which
// reads no more) read once the session has ended (the binary got SIGTERM and is shutting
// down) is answered at once with an internal error that says so, rather
// than dropped, which left the client waiting on its id until it noticed
// the exit; a notification read then is still dropped.
func TestRequestAfterSessionEndAnswered(t *testing.T) {
	for _, tc := range []struct{ name, id, request string }{
		{"tools/call", `7`, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hello","arguments":{}}}`},
		{"string id", `"call:8"`, `{"jsonrpc":"2.0","id":"call:8","method":"tools/call","params":{"name":"hello","arguments":{}}}`},
		{"tools/list", `3`, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`}, // passed on to mcp-go
		{"subscriptions/listen", `"listen:1"`, `{"jsonrpc":"2.0","id":"listen:1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := endSession(t)
			s.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
			s.send(t, tc.request)
			line := s.next(t)
			var got struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &got), line)
			require.Equal(t, tc.id, string(got.ID), "the request's own answer comes next: nothing for the notification")
			require.Nil(t, got.Result, line)
			require.Equal(t, mcp.INTERNAL_ERROR, got.Error.Code, line)
			require.Contains(t, got.Error.Message, "session has ended", line)
			require.Contains(t, got.Error.Message, "shutting down", line)
		})
	}
}
