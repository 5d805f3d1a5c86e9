package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/structured"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver/httpserve"
	"github.com/toolwarden/toolwarden/mcpserver/internal/wire"
	"github.com/toolwarden/toolwarden/mcpserver/stdio"
	"github.com/toolwarden/toolwarden/tools"
)

// guardMiddleware puts the guard in front of every tool handler: the handler
// runs only when the guard admits the call, under the call deadline, and its
// result always goes back through the guard's output cap and audit.
func (s *Server) guardMiddleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.guardCall(ctx, req, next)
	}
}

// guardCall is guardMiddleware's handler with next as an argument, which
// toolMiddleware calls without a closure more per call.
func (s *Server) guardCall(ctx context.Context, req mcp.CallToolRequest, next server.ToolHandlerFunc) (*mcp.CallToolResult, error) {
	call, raw, bad := s.callOf(ctx, req)
	call.CallID = s.egress.newCallID()
	if bad != nil {
		return toolerr.Result(s.guard.Refuse(call, bad)), nil
	}
	if e := s.late.admit(call.LimitKey()); e != nil {
		return toolerr.Result(s.guard.Reject(call, e)), nil
	}
	call.Definition = s.pins.digest(call.Tool)
	// A drifted upstream tool is refused before the guard charges or asks
	// a human for it; one the policy does not allow is denied as such.
	if e := s.pins.refusal(call.Tool); e != nil && s.guard.Allowed(call.Tool) {
		return toolerr.Result(s.guard.Reject(call, e)), nil
	}
	// The retry that brings the human's answer (2026-07-28) was charged
	// when it asked; only the server's own unused, unexpired state for
	// this very call spares it a second charge. Its audit lines name
	// the approval request it answers, which is not asked again.
	answer := s.approval.answered(req, call)
	call.ApprovalID = answer.approvalID
	admit := s.guard.Admit
	if answer.valid() {
		admit = s.guard.AdmitAnswer
	}
	ticket, denial := decide(ctx, admit, call)
	if denial != nil {
		s.log.Debug("call denied", "tool", call.Tool, "session", call.Session, "code", denial.Code, "rule", denial.Rule)
		return toolerr.Result(denial), nil
	}
	// When the argument scan redacted secrets (arguments.secrets:
	// redact), the approval preview and the handler see the redacted ones.
	if redacted := ticket.RedactedArgs(); redacted != nil {
		raw = redacted
	}
	if ticket.NeedsApproval() {
		if res := s.awaitApproval(ctx, req, call, ticket, raw, answer); res != nil {
			return res, nil
		}
	}
	// The handler decodes the very bytes the guard validated, and need
	// not encode the arguments again.
	req.Params.RawArguments = raw
	return s.runTraced(s.egress.withCall(ctx, call), ticket, call, next, req), nil
}

// toolMiddleware is what mcp-go runs around every tool handler: the guard
// (in the call's span when tracing is on), then the result made ready for
// mcp-go's encoding (see structured.ForWire). The stdio transport writes
// a structured.Output's JSON itself (see wire.WriteToolResult), and so does
// streamable HTTP, in the place of a stand-in (see httpserve.StandIn).
func (s *Server) toolMiddleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := s.observedCall(ctx, req, next)
		if res == nil || wire.OutputAsJSON(ctx) {
			return res, err
		}
		if err == nil {
			if standIn := httpserve.StandIn(ctx, res); standIn != nil {
				return standIn, nil
			}
		}
		res.StructuredContent = structured.ForWire(res.StructuredContent)
		return res, err
	}
}

// newCall builds the guard's view of a call: who makes it (the session,
// the identity limits are counted under, whether it is a trusted operator
// call) and its arguments, with the JSON they came from.
func newCall(ctx context.Context, req mcp.CallToolRequest) (guard.Call, json.RawMessage, *toolerr.Error) {
	call := guard.Call{Tool: req.Params.Name, Session: sessionID(ctx), Identity: identityOf(ctx), Claims: claimsOf(ctx), Trusted: isTrusted(ctx)}
	args, raw, err := decodeArgs(req)
	if err != nil {
		return call, nil, toolerr.New(toolerr.InvalidSchema, "Send the arguments as one JSON object.",
			"arguments are not a JSON object: %v", err).WithRule("args.json")
	}
	call.Args, call.ArgBytes = args, int64(len(raw))
	return call, raw, nil
}

// runWithDeadline runs the handler under the call deadline (callDeadline)
// and ends the ticket with its result. Past the deadline the handler is told to stop
// (its context ends) and lateCalls waits a grace period for it, so that
// the audit line says what truly happened. A stdio worker's call runs its
// handler in place (runInPlace), any other on a handler goroutine, so that
// the call is answered at its deadline whatever the handler does.
func (s *Server) runWithDeadline(ctx context.Context, t *guard.Ticket, call guard.Call, next server.ToolHandlerFunc, req mcp.CallToolRequest) *mcp.CallToolResult {
	timeout, rule := s.callDeadline(req.Params.Name, call.Args)
	why := stopping{rule, timeout}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if turn, ok := stdio.TurnOf(ctx); ok {
		return s.runInPlace(ctx, turn, t, call.LimitKey(), next, req, why)
	}
	job := startHandler(ctx, next, req)
	select {
	case r := <-job.done:
		job.release()
		return endReturned(ctx, t, r, why)
	case <-ctx.Done():
	}
	return s.late.settle(t, call.LimitKey(), job.done, why.err(ctx))
}

// decodeArgs returns the call's arguments as plain JSON values, numbers kept
// exact, for validation and the audit digest, with the JSON they came from.
func decodeArgs(req mcp.CallToolRequest) (any, json.RawMessage, error) {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		if req.Params.Arguments == nil {
			return nil, nil, nil
		}
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return nil, nil, err
		}
	}
	var v any
	if err := tools.DecodeNumbers(raw, &v); err != nil {
		return nil, nil, err
	}
	switch v.(type) {
	case nil, map[string]any:
		return v, raw, nil
	}
	return nil, nil, errNotObject
}

var errNotObject = toolerr.New(toolerr.InvalidSchema, "", "arguments must be an object")

// sessionID names the call's session for the audit log. HTTP session IDs
// (streamable HTTP's, and SSE's, which open its message endpoint) are
// credentials, so only a digest of them is used; the local transports'
// (stdio, in-process) are kept. Calls of the stateless 2026 protocol have
// no session and share "anonymous" (limits are counted per identity, not
// per session).
func sessionID(ctx context.Context) string {
	if id := knownSession(ctx); id != "" {
		return id
	}
	return "anonymous"
}

// knownSession is the call's session as sessionID names it, or "" for a
// call of no session.
func knownSession(ctx context.Context) string {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || cs.SessionID() == "" {
		return ""
	}
	id := cs.SessionID()
	if id == "stdio" || strings.HasPrefix(id, "inprocess-") {
		return id
	}
	return httpserve.SessionDigest(id)
}
