package mcpserver

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/mcpserver/internal/wire"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
)

// EncodeAnswer is how stdio writes an answer (into a recycled
// buffer), for benchmarks; the bytes are good until the next call.
func EncodeAnswer(msg mcp.JSONRPCMessage) ([]byte, error) {
	buf := wire.Buffer()
	defer wire.PutBuffer(buf)
	err := wire.WriteAnswer(buf, msg)
	return buf.Bytes(), err
}

// StdioContext is the context a stdio worker answers a call in (its
// handler runs in place), for benchmarks: it may serve any number of calls
// that end in time.
func StdioContext(ctx context.Context) context.Context {
	return &stdio.Turn{Context: wire.AsJSON(ctx)}
}

// GuardedHandler is a tool's handler inside the server's middleware (the
// guard, the output filter, the audit log, the deadline), as mcp-go runs
// it once it has decoded a tools/call, for benchmarks.
func (s *Server) GuardedHandler(tool string) server.ToolHandlerFunc {
	return s.toolMiddleware(s.mcp.GetTool(tool).Handler)
}

// BareStreamable is mcp-go's streamable HTTP server over the server's
// tools, without toolwarden's HTTP layers: answers as mcp-go encodes
// them, for tests to compare with.
func (s *Server) BareStreamable() http.Handler { return server.NewStreamableHTTPServer(s.mcp) }

// SetOffers replaces what the server tells when a client is offered a
// tool (offered): the exec tools' hook, in the real server.
func (s *Server) SetOffers(offers map[string]func()) { s.offers = offers }

// SetTaskBounds sets tasks.* as Build does.
func (s *Server) SetTaskBounds(cfg configs.Tasks) { s.tasks.cfg = cfg }

// SchemasCompiled is how many input schemas the server's guard has
// compiled.
func (s *Server) SchemasCompiled() int64 { return s.guard.SchemasCompiled() }
