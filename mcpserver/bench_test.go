package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// benchServer is a server over a workspace holding a 4 KiB bench.txt,
// with call and output limits no benchtime reaches.
func benchServer(b *testing.B) *mcpserver.Built {
	f := newFixture(b)
	f.cfg.Limits.MaxCallsPerSession = 1 << 30
	f.cfg.Limits.MaxOutputBytesPerSession = 1 << 50
	require.NoError(b, os.WriteFile(f.ws+"/bench.txt", []byte(strings.Repeat("0123456789abcdef\n", 241)), 0o644))
	return f.server(b)
}

// BenchmarkReadFile4KiBInProcess measures a read_file of a 4 KiB file
// through the whole server (protocol, guard, audit, tool) in-process.
func BenchmarkReadFile4KiBInProcess(b *testing.B) {
	c := inProcess(b, benchServer(b))
	ctx := context.Background()
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": "bench.txt"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}

// BenchmarkReadFile4KiBGuardedHandler measures what a 4 KiB read_file
// costs past mcp-go's decoding of the message and before its answer is
// encoded: the handler, the guard's decision, the output filter and the
// two audit lines (the server's own share, which the in-process
// target is about).
func BenchmarkReadFile4KiBGuardedHandler(b *testing.B) {
	srv := benchServer(b)
	h := srv.GuardedHandler("read_file")
	ctx := mcpserver.StdioContext(context.Background())
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.RawArguments = json.RawMessage(`{"path":"bench.txt"}`)
	b.ReportAllocs()
	for b.Loop() {
		res, err := h(ctx, req)
		if err != nil || res.IsError || len(res.Content) != 1 {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}

// BenchmarkReadFile4KiBServerSide measures the server's share of a 4 KiB
// read_file: one JSON-RPC message in, the response out (json.Marshal, as
// bare mcp-go's benchmark of the same name), without a client.
func BenchmarkReadFile4KiBServerSide(b *testing.B) {
	benchReadFile4KiB(b, context.Background(), func(m mcp.JSONRPCMessage) ([]byte, error) { return json.Marshal(m) })
}

// BenchmarkReadFile4KiBServerSideStdioEncoding is the same with the
// response encoded as toolwarden's stdio transport writes it (one pass,
// the structured output's JSON as the guard checked it).
func BenchmarkReadFile4KiBServerSideStdioEncoding(b *testing.B) {
	benchReadFile4KiB(b, mcpserver.StdioContext(context.Background()), mcpserver.EncodeAnswer)
}

func benchReadFile4KiB(b *testing.B, ctx context.Context, encode func(mcp.JSONRPCMessage) ([]byte, error)) {
	srv := benchServer(b)
	srv.MCP().HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		out, err := encode(srv.MCP().HandleMessage(ctx, msg))
		if err != nil || !strings.Contains(string(out), "0123456789abcdef") || strings.Contains(string(out), `"isError":true`) {
			b.Fatalf("bad response %.300s", out)
		}
	}
}
