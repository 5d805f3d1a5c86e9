package mcpserver_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// BenchmarkReadFile4KiBInProcess measures a read_file of a 4 KiB file
// through the whole server (protocol, guard, audit, tool) in-process.
func BenchmarkReadFile4KiBInProcess(b *testing.B) {
	f := newFixture(b)
	require.NoError(b, os.WriteFile(f.ws+"/bench.txt", []byte(strings.Repeat("0123456789abcdef\n", 241)), 0o644))
	srv := f.server(b)
	c, err := client.NewInProcessClient(srv.MCP())
	require.NoError(b, err)
	ctx := context.Background()
	require.NoError(b, c.Start(ctx))
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(b, err)
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": "bench.txt"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}
