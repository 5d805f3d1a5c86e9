package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkApprovalWrite measures a small write_file in-process: without
// approval (mode allow), asking a human who answers at once (both protocol
// generations), and let through by "approve identical calls".
func BenchmarkApprovalWrite(b *testing.B) {
	for _, bc := range []struct {
		name, version string
		modes         map[string]string
		identical     bool
	}{
		{"allow", "2025-11-25", map[string]string{"*": "allow"}, false},
		{"elicit-2025", "2025-11-25", nil, false},
		{"elicit-2026", mcp.LATEST_PROTOCOL_VERSION, nil, false},
		{"session-grant", "2025-11-25", nil, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b)
			f.cfg.Approval.Modes, f.cfg.Approval.Timeout = bc.modes, time.Minute
			c, err := client.NewInProcessClientWithOptions(f.server(b).MCP(), client.WithElicitationHandler(&human{answer: accept(bc.identical)}))
			if err != nil {
				b.Fatal(err)
			}
			startB(b, c, bc.version)
			req := mcp.CallToolRequest{}
			req.Params.Name = "write_file"
			req.Params.Arguments = map[string]any{"path": "bench.txt", "content": "0123456789abcdef\n"}
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.CallTool(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatalf("call failed: %v %+v", err, res)
				}
			}
		})
	}
}

func startB(b *testing.B, c *client.Client, version string) {
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		b.Fatal(err)
	}
}
