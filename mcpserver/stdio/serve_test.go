package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/rpcerr"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// bareServer is mcp-go's server with two tools, as the transport sees any
// server: "hello" answers at once, "slow" after a few milliseconds.
func bareServer() *server.MCPServer {
	srv := server.NewMCPServer("bare", "1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("hello"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello from toolwarden"), nil
	})
	// "refuse" answers with a JSON-RPC error of its own (rpcerr), as a
	// tool that needs an undeclared client capability does.
	srv.AddTool(mcp.NewTool("refuse"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !rpcerr.Answer(ctx, rpcerr.MissingCapability("sampling")) {
			return mcp.NewToolResultError("no slot for the error"), nil
		}
		return mcp.NewToolResultError("the client lacks sampling"), nil
	})
	srv.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(20 * time.Millisecond):
			return mcp.NewToolResultText("slow but done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return srv
}

// handshake is what a client sends first: initialize (id 0), then
// notifications/initialized.
const handshake = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// pipe serves in, written all at once with the input then closed, and
// returns the lines written, by id.
func pipe(t *testing.T, in string) map[string][]string {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, stdio.Serve(ctx, bareServer(), strings.NewReader(in), &out, os.Stderr))
	answers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		answers[string(m.ID)] = append(answers[string(m.ID)], line)
	}
	return answers
}

// TestCallsFlood: a client that pipes in far more tools/call requests
// than the workers and their queue hold (5 and 100) gets each answered
// once: the overflow is served on the reading goroutine, which holds the
// next line back, as mcp-go's stdio server did.
func TestCallsFlood(t *testing.T) {
	var in strings.Builder
	in.WriteString(handshake)
	const calls = 400
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hello","arguments":{}}}`+"\n", i)
	}
	answers := pipe(t, in.String())
	require.Len(t, answers, calls+1, "one answer per request")
	for id, lines := range answers {
		require.Len(t, lines, 1, "request %s answered once", id)
		if id != "0" {
			require.Contains(t, lines[0], "hello from toolwarden", "every call answered")
		}
	}
}

// TestEndOfInputAnswersWhatWasAsked: a client that writes its requests
// and closes its input at once (a script piping into serve) gets an
// answer to each, not "canceled": the end of input waits for them. A
// request that is refused or unknown counts as answered too.
func TestEndOfInputAnswersWhatWasAsked(t *testing.T) {
	var in strings.Builder
	in.WriteString(handshake)
	const calls = 12
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{}}}`+"\n", i)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"s\u0031","method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"slow","arguments":{}}}`) // no final newline

	answers := pipe(t, in.String())
	ids := slices.Sorted(maps.Keys(answers))
	require.Len(t, ids, calls+3, "one answer per request, got %v", ids)
	for id, lines := range answers {
		for _, line := range lines {
			require.NotContains(t, line, "canceled", "request %s was cancelled by the end of input", id)
		}
	}
	require.Contains(t, answers[`"s1"`][0], `"error"`)
	require.Contains(t, answers[`"last"`][0], "slow but done")
}

// TestHandlersOwnError: a handler that answers with its own JSON-RPC
// error (rpcerr.Answer) gets that error, with its data, for its call
// only; the call beside it is answered as usual.
func TestHandlersOwnError(t *testing.T) {
	answers := pipe(t, handshake+
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refuse","arguments":{}}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{}}}`+"\n")
	require.Len(t, answers["1"], 1)
	var got struct {
		Result json.RawMessage `json:"result"`
		Error  struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(answers["1"][0]), &got))
	require.Nil(t, got.Result, answers["1"][0])
	require.Equal(t, -32021, got.Error.Code)
	require.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(got.Error.Data))
	require.Contains(t, answers["2"][0], "hello from toolwarden")
}

// TestListenAcknowledgedFirst: a 2026-07-28 subscriptions/listen's
// acknowledgement is written before its answer, also when the listen
// subscribes to nothing the server offers and is answered at once.
// mcp-go's stdio server wrote the two from two goroutines, and the
// acknowledgement sometimes came second.
func TestListenAcknowledgedFirst(t *testing.T) {
	const listens = 200
	var in strings.Builder
	for i := range listens {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n", i)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, stdio.Serve(ctx, bareServer(), strings.NewReader(in.String()), &out, os.Stderr))
	acked := map[string]bool{}
	answered := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		switch {
		case m.Method == "notifications/subscriptions/acknowledged":
			acked[string(m.Params.Meta["io.modelcontextprotocol/subscriptionId"])] = true
		case m.ID != nil:
			require.NotNil(t, m.Result, line)
			require.True(t, acked[string(m.ID)], "listen %s answered before its acknowledgement", m.ID)
			answered++
		}
	}
	require.Equal(t, listens, answered)
}

// TestEndOfInputDoesNotWaitForAListen: a 2026-07-28 client (Claude Code)
// keeps a subscriptions/listen open for the whole session, answered only
// when the session ends. Closing its input must end the session at once:
// the end of input waited for that answer like any other (up to the
// drain limit, ten minutes), so every server Claude Code had started
// stayed behind it, with its upstreams, for ten minutes.
func TestEndOfInputDoesNotWaitForAListen(t *testing.T) {
	srv := server.NewMCPServer("listened", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("hello"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hello"), nil
	})
	in := `{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	var out bytes.Buffer
	ended := make(chan error, 1)
	go func() { ended <- stdio.Serve(context.Background(), srv, strings.NewReader(in), &out, os.Stderr) }()
	select {
	case err := <-ended:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("the end of input waited for the open listen")
	}
	require.Contains(t, out.String(), "notifications/subscriptions/acknowledged", "the listen was open")
}
