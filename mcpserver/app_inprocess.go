package mcpserver

import (
	"context"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/configs"
)

// InProcess is a server built as Serve builds it, to be driven in the
// same process (the gemini bridge): its MCP server, the logger at the
// config's level, and Close, which closes the server, then the audit log.
type InProcess struct {
	MCP   *server.MCPServer
	Log   *slog.Logger
	Close func()
}

// OpenInProcess opens the audit log of l's config, builds the server over
// it and logs the start, as Serve does, but serves nothing: the caller
// drives InProcess.MCP and closes it.
func OpenInProcess(ctx context.Context, l *configs.Loaded) (*InProcess, error) {
	log := NewLogger(l.Config.Log.Level)
	built, auditLog, closeAll, err := openServer(ctx, l.Config, log)
	if err != nil {
		return nil, err
	}
	logStart(log, l, auditLog.Path(), tuneGC())
	return &InProcess{MCP: built.MCP(), Log: log, Close: closeAll}, nil
}
