package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// lockedBuffer is a log sink the server may write from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSessionStartLogsProtocol: each initialize logs the protocol revision
// the session negotiated and the client that asked, so an operator (and
// the client matrix, e2e/clienttable_test.go) sees which era a client runs.
func TestSessionStartLogsProtocol(t *testing.T) {
	f := newFixture(t)
	a, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	var logs lockedBuffer
	b, err := mcpserver.Build(context.Background(), f.cfg, a, "test", slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })

	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		c, err := client.NewInProcessClient(b.MCP())
		require.NoError(t, err)
		require.NoError(t, c.Start(ctxT(t)))
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = version
		init.Params.ClientInfo = mcp.Implementation{Name: "era-" + version, Version: "7"}
		_, err = c.Initialize(ctxT(t), init)
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}

	var seen []map[string]any
	for line := range bytes.Lines([]byte(logs.String())) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(line, &rec))
		if rec["msg"] == "session initialized" {
			seen = append(seen, rec)
		}
	}
	require.Len(t, seen, 2, logs.String())
	for i, version := range []string{"2025-06-18", "2025-11-25"} {
		require.Equal(t, "INFO", seen[i]["level"])
		require.Equal(t, version, seen[i]["protocol_version"])
		require.Equal(t, "era-"+version, seen[i]["client"])
		require.Equal(t, "7", seen[i]["client_version"])
		require.NotEmpty(t, seen[i]["session"])
	}
}
