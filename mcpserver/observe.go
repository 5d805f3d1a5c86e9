package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/tracing"
	"github.com/toolwarden/toolwarden/sandbox"
	"go.opentelemetry.io/otel/attribute"
)

// Observers watch the server for the operator: metrics (package metrics)
// and whatever else counts calls. The zero value watches nothing and costs
// nothing. Traces need no observer here: package tracing is on when the
// environment asks for OTLP export.
type Observers struct {
	// Guard sees every audit line the guard writes.
	Guard guard.Observer
	// Sandbox wraps each sandbox backend the exec and declared cli tools
	// run in.
	Sandbox func(sandbox.Runner) sandbox.Runner
	// WaitingForApproval is told when a call starts waiting for a human;
	// it returns what to call when the wait ends.
	WaitingForApproval func() (done func())
	// Call is told of each tools/call once it is answered: the tool, the
	// protocol version in effect, whether the result has isError, the
	// JSON-RPC error if any, and the time from arrival to answer.
	Call func(tool, protocolVersion string, isError bool, err error, d time.Duration)
	// Egress counts each connection through the egress proxy: the host
	// (when allowed), outcome, rule and bytes each way.
	Egress func(host string, allowed bool, rule string, up, down int64)
}

// runner is r wrapped by the sandbox observer, if any.
func (o Observers) runner(r sandbox.Runner) sandbox.Runner {
	if o.Sandbox == nil {
		return tracing.Runner(r)
	}
	return tracing.Runner(o.Sandbox(r))
}

// BuildObserved is Build with observers, set before the server serves.
func BuildObserved(ctx context.Context, cfg configs.Config, audit guard.Auditor, version string, log *slog.Logger, obs Observers) (*Built, error) {
	return build(ctx, cfg, audit, version, log, obs)
}

// observedCall is the guarded call of next inside the span of the whole
// call when tracing is on. mcp-go applies middleware to each call, so off
// it is guardCall alone, without a closure per call.
func (s *Server) observedCall(ctx context.Context, req mcp.CallToolRequest, next server.ToolHandlerFunc) (res *mcp.CallToolResult, err error) {
	if s.obs.Call != nil {
		start := time.Now()
		defer func() {
			s.obs.Call(req.Params.Name, server.RequestProtocolVersion(ctx), res != nil && res.IsError, err, time.Since(start))
		}()
	}
	if !tracing.Enabled() {
		return s.guardCall(ctx, req, next)
	}
	return tracedCall(s.guardMiddleware(next))(ctx, req)
}

// tracedCall is the span of a whole call, whose parent the client named
// (_meta.traceparent or the HTTP header), ended with the call's error
// code.
func tracedCall(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var meta map[string]any
		if req.Params.Meta != nil {
			meta = req.Params.Meta.AdditionalFields
		}
		ctx, span := tracing.StartCall(ctx, tracing.Call{Tool: req.Params.Name, RequestID: tracing.RequestID(ctx),
			ProtocolVersion: server.RequestProtocolVersion(ctx), SessionID: knownSession(ctx), Meta: meta})
		res, err := next(ctx, req)
		code := ""
		isError := res != nil && res.IsError
		if isError {
			code = string(toolerr.ErrorCode(res))
		}
		tracing.EndCall(span, isError, code, err)
		return res, err
	}
}

// decide is admit (the guard's decision) in its own span.
func decide(ctx context.Context, admit func(guard.Call) (*guard.Ticket, *toolerr.Error), call guard.Call) (*guard.Ticket, *toolerr.Error) {
	if !tracing.Enabled() {
		return admit(call)
	}
	_, span := tracing.Start(ctx, "guard.decide")
	t, denial := admit(call)
	outcome, code := string(guard.Allow), ""
	switch {
	case denial != nil:
		outcome, code = string(guard.Deny), string(denial.Code)
		span.SetAttributes(attribute.String("toolwarden.rule", denial.Rule))
	case t.NeedsApproval():
		outcome = string(guard.NeedsApproval)
	}
	tracing.End(span, outcome, code)
	return t, denial
}

// awaitApproval is approver.approve in its own span, counted as waiting
// for a human while it lasts.
func (s *Server) awaitApproval(ctx context.Context, req mcp.CallToolRequest, call guard.Call, t *guard.Ticket, raw json.RawMessage, ans answer) *mcp.CallToolResult {
	if s.obs.WaitingForApproval != nil {
		defer s.obs.WaitingForApproval()()
	}
	ctx, span := tracing.Start(ctx, "approval.wait")
	res := s.approval.approve(ctx, req, call, t, raw, ans)
	outcome, code := "approved", ""
	if res != nil {
		outcome, code = "not_approved", string(toolerr.ErrorCode(res))
	}
	tracing.End(span, outcome, code)
	return res
}

// runTraced is runWithDeadline in the span of the handler.
func (s *Server) runTraced(ctx context.Context, t *guard.Ticket, call guard.Call, next server.ToolHandlerFunc, req mcp.CallToolRequest) *mcp.CallToolResult {
	if !tracing.Enabled() {
		return s.runWithDeadline(ctx, t, call, next, req)
	}
	ctx, span := tracing.Start(ctx, "tool.handler", attribute.String("gen_ai.tool.name", call.Tool))
	res := s.runWithDeadline(ctx, t, call, next, req)
	code := ""
	if res.IsError {
		code = string(toolerr.ErrorCode(res))
	}
	tracing.End(span, "", code)
	return res
}
