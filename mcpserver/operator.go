package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/guard"
)

// Call makes one tool call as an MCP client would, through an in-process
// client: the same guard middleware, deadline, output cap and audit log
// as any client's call, counted under the local identity. trusted marks
// it an operator call (toolwarden call --trusted), which may run
// requires_trust tools and is audited as trusted.
func (s *Server) Call(ctx context.Context, name string, args json.RawMessage, trusted bool) (*mcp.CallToolResult, error) {
	if trusted {
		ctx = context.WithValue(ctx, trustedKey, true)
	}
	c, err := s.localClient(ctx, "toolwarden-call")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if len(args) > 0 {
		req.Params.Arguments = args
	}
	return c.CallTool(ctx, req)
}

// Explain decides a call exactly as the guard middleware would (the same
// call construction, the same Decide), for the local identity, without
// running it, counting it or auditing it.
func (s *Server) Explain(ctx context.Context, name string, args json.RawMessage, trusted bool) guard.Decision {
	if trusted {
		ctx = context.WithValue(ctx, trustedKey, true)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.RawArguments = args
	call, _, bad := s.callOf(ctx, req)
	if bad != nil {
		return guard.Decision{Outcome: guard.Deny, Rule: bad.Rule, Err: bad,
			Trace: []guard.Step{{Check: "arguments", Outcome: guard.Deny, Rule: bad.Rule, Detail: bad.Message}}}
	}
	return s.guard.Explain(call)
}
