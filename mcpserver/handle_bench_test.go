package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkReadFile4KiBServerSide measures the server's share of a 4 KiB
// read_file: one JSON-RPC message in, the response out, without a client.
func BenchmarkReadFile4KiBServerSide(b *testing.B) {
	f := newFixture(b)
	require.NoError(b, os.WriteFile(f.ws+"/bench.txt", []byte(strings.Repeat("0123456789abcdef\n", 241)), 0o644))
	srv := f.server(b)
	ctx := context.Background()
	srv.MCP().HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		out, err := json.Marshal(srv.MCP().HandleMessage(ctx, msg))
		if err != nil || !strings.Contains(string(out), "0123456789abcdef") || strings.Contains(string(out), `"isError":true`) {
			b.Fatalf("bad response %.300s", out)
		}
	}
}
