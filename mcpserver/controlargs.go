package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// callOf is newCall with the client's control arguments (Gemini CLI's
// wait_for_previous, policy.client_control_args) dropped: the guard
// validates, digests and audits, and the handler decodes, the arguments
// the tool is meant to receive. A call and `policy explain` share it, so
// both decide the same arguments.
func (s *Server) callOf(ctx context.Context, req mcp.CallToolRequest) (guard.Call, json.RawMessage, *toolerr.Error) {
	call, raw, bad := newCall(ctx, req)
	if bad != nil {
		return call, raw, bad
	}
	call, raw = s.guard.DropControlArgs(call, raw)
	if len(call.Dropped) > 0 {
		s.log.Debug("client control arguments dropped", "tool", call.Tool, "session", call.Session, "args", call.Dropped)
	}
	return call, raw, nil
}
