package mcpserver_test

import (
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/fs"
)

// TestStdioCallsSideBySideAndCancelled: tools/call requests over stdio
// (served by package stdio's workers, not mcp-go's stdio server) run side by side, a
// fast call answered while a slow one waits, and a notifications/cancelled
// from the client ends the slow call's handler, which then changed
// nothing; the end of input ends the server.
func TestStdioCallsSideBySideAndCancelled(t *testing.T) {
	f := newFixture(t)
	ws, err := sandbox.Open(f.ws)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	set := []tools.Tool{slowWrite(t, f, closed(), true)}
	for _, tl := range fs.New(ws, f.cfg.FS).Tools() {
		if tl.Tool.Name == "read_file" {
			set = append(set, tl)
		}
	}
	f.cfg.Policy.Allow = []string{"read_file", "write_file"}
	log, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	g, err := mcpserver.NewGuard(f.cfg, set, log)
	require.NoError(t, err)
	c := serveStdioOn(t, mcpserver.New(g, set, "test", slog.New(slog.DiscardHandler)))

	r := c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, "0", string(r.ID))
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"write_file","arguments":{"path":"new.txt","content":"x"}}}`)
	r = c.roundTrip(`{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`)
	require.Equal(t, `"fast"`, string(r.ID), "the fast call is answered while the slow one runs")
	require.Contains(t, string(r.Result), "hello from toolwarden")

	// A cancellation of a request not yet running is ignored (as the spec
	// allows): wait for the slow call's handler first, audited as it starts.
	require.Eventually(t, func() bool { return slices.Contains(auditTrail(t, f.auditPath), "write_file:allowed:allowed") },
		20*time.Second, 5*time.Millisecond, "the slow call never started")
	r = c.roundTrip(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}`)
	require.Equal(t, `"slow"`, string(r.ID))
	require.Contains(t, string(r.Result), "cancel", "the slow call ends cancelled")
	require.NoError(t, c.in.Close())
	<-c.ended
	require.NoError(t, c.err)
	require.NoFileExists(t, filepath.Join(f.ws, "new.txt"))
}
