package fs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// benchTool returns a tool of the file toolset over a workspace holding
// name with content, under the default limits' 256 KiB read cap.
func benchTool(b *testing.B, tool, name, content string) tools.Tool {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := sandbox.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ws.Close() })
	limits := smallLimits()
	limits.MaxReadBytes, limits.MaxFilesPerRead = 256*1024, 20
	for _, tl := range fs.New(ws, limits).Tools() {
		if tl.Tool.Name == tool {
			return tl
		}
	}
	b.Fatalf("no tool %s", tool)
	return tools.Tool{}
}

// benchRead calls read_file's handler (argument decoding, the read, the
// structured result) with args, as the server does after the guard.
func benchRead(b *testing.B, content, args string) {
	tl := benchTool(b, "read_file", "bench.txt", content)
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.RawArguments = json.RawMessage(args)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := tl.Handler(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}

// BenchmarkReadFileHandler4KiB is the handler's share of
// mcpserver's BenchmarkReadFile4KiBServerSide: the same 4 KiB file.
func BenchmarkReadFileHandler4KiB(b *testing.B) {
	benchRead(b, strings.Repeat("0123456789abcdef\n", 241), `{"path":"bench.txt"}`)
}

// BenchmarkReadFileHandler1MiBCapped reads the head of a file larger than
// the cap.
func BenchmarkReadFileHandler1MiBCapped(b *testing.B) {
	benchRead(b, strings.Repeat(strings.Repeat("x", 79)+"\n", 1<<14), `{"path":"bench.txt"}`)
}

// BenchmarkReadFileHandlerOffset reads 100 lines from the middle of a file.
func BenchmarkReadFileHandlerOffset(b *testing.B) {
	benchRead(b, strings.Repeat("0123456789abcdef\n", 2000), `{"path":"bench.txt","offset":1000,"limit":100}`)
}
