package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// BenchmarkReadFile4KiBServerSide is the bare mcp-go baseline of
// mcpserver's benchmark of the same name: one tools/call message in, the
// response out, no client, no guard. Their ratio is toolwarden's own cost.
func BenchmarkReadFile4KiBServerSide(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(dir+"/bench.txt", []byte(strings.Repeat("0123456789abcdef\n", 241)), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	srv := newServer(root)
	ctx := context.Background()
	srv.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		out, err := json.Marshal(srv.HandleMessage(ctx, msg))
		if err != nil || !strings.Contains(string(out), "0123456789abcdef") || strings.Contains(string(out), `"isError":true`) {
			b.Fatalf("bad response %.300s", out)
		}
	}
}
