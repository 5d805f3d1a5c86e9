package mcpserver

import (
	"context"
	"log/slog"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
)

// InProcess is a server built as Serve builds it, to be driven in the
// same process (the gemini bridge): its MCP server, the logger at the
// config's level, and Close, which closes the server, then the audit log.
type InProcess struct {
	MCP   *server.MCPServer
	Log   *slog.Logger
	Close func()
	audit *audit.Log
}

// Spend is one model request of the gemini bridge: the model, what the
// request was for (turn, summary), its cost and the run's total with
// their currency ("0.0025 USD"), and its tokens.
type Spend struct {
	Model, Purpose, Cost, RunCost string
	InputTokens, OutputTokens     int64
}

// RecordSpend writes a spend line to the audit log: the model as the
// tool, the request's cost and usage, the run's total.
func (p *InProcess) RecordSpend(s Spend) {
	e := audit.Entry{Session: "gemini", Tool: s.Model, Rule: "bridge." + s.Purpose, Outcome: audit.OutcomeSpend,
		Cost: s.Cost, RunCost: s.RunCost, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens}
	if err := p.audit.Append(e); err != nil {
		p.Log.Error("audit: the spend line was not written", "err", err)
	}
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
	return &InProcess{MCP: built.MCP(), Log: log, Close: closeAll, audit: auditLog}, nil
}
