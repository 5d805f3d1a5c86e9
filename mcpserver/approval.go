package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// approvalInputID keys the approval question among a call's input requests.
const approvalInputID = "toolwarden_approval"

// approveIdentical is the form field that approves identical calls for the
// rest of the session.
const approveIdentical = "approve_identical"

// anonymousSession is what sessionID calls a request without a session.
const anonymousSession = "anonymous"

// defaultApprovalTimeout applies until Build sets the configured one.
const defaultApprovalTimeout = 5 * time.Minute

// approver asks the human to approve calls through MCP elicitation. For
// clients of protocol 2026-07-28 and later the question is a multi
// round-trip input request whose signed state binds the answer to the
// exact arguments; for earlier clients it is an elicitation/create request
// sent while the call waits, so the timeout can be enforced.
type approver struct {
	mcp      *server.MCPServer
	timeout  time.Duration
	previews map[string]tools.Preview
	states   *stateSigner
	now      func() time.Time

	// channels is approval.channel; hub, once OpenApprovals made it,
	// holds the calls that wait on the page, the terminal or the webhook
	// (see channelFor).
	channels []string
	hub      *approvals.Hub
	// places caps the calls waiting for a human (approval.max_pending):
	// in the hub, and for the client's form (elicitation/create), which
	// holds the call as long.
	places *approvals.Places
	// joinFleet, set on a replica sharing its state, shares the hub's
	// waiting calls with the other replicas.
	joinFleet func(*approvals.Hub)

	mu sync.Mutex
	// grants holds, per session, the tool+digest pairs the human approved
	// for the rest of the session.
	grants map[string]map[string]bool
}

func newApprover(m *server.MCPServer, toolset []tools.Tool) *approver {
	a := &approver{mcp: m, timeout: defaultApprovalTimeout, previews: map[string]tools.Preview{},
		states: newStateSigner(), now: time.Now, grants: map[string]map[string]bool{}, channels: []string{channelElicit},
		places: approvals.NewPlaces(defaultMaxPending)}
	for _, t := range toolset {
		if t.Meta.Preview != nil {
			a.previews[t.Tool.Name] = t.Meta.Preview
		}
	}
	return a
}

// approve settles a pending ticket. It returns nil when the call was
// approved and may run; otherwise the result to send: a refusal, or (for a
// 2026-07-28 client) the request for the human's answer.
func (a *approver) approve(ctx context.Context, req mcp.CallToolRequest, call guard.Call, t *guard.Ticket, raw json.RawMessage, ans answer) *mcp.CallToolResult {
	grant := call.Tool + "\x00" + t.Digest()
	if a.granted(call.Session, grant) {
		return failed(t.Approve("approval.session"))
	}
	switch {
	case ans.expired:
		return toolerr.Result(t.Decline(timeoutError(a.timeout)))
	case ans.valid():
		return a.settle(call, t, ans.response)
	}
	switch a.channelFor(ctx) {
	case channelHub:
		return a.askHub(ctx, call, t, raw)
	case channelNone:
		return toolerr.Result(t.Decline(unavailableError(call.Tool, "the client did not declare the elicitation capability")))
	}
	params, err := a.question(ctx, call.Tool, t.Digest(), raw)
	if err != nil {
		return toolerr.Result(t.Decline(previewError(err)))
	}
	if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		state := a.states.sign(approvalState{Tool: call.Tool, Digest: t.Digest(), Session: call.Session,
			Identity: call.Identity, Bytes: call.ArgBytes, Expires: a.now().Add(a.timeout), Approval: t.ApprovalID()})
		return server.NewInputRequestBuilder(state).Elicit(approvalInputID, params).ToolResult()
	}
	// The form holds the call until the client answers or the timeout:
	// it takes a place among the waiting calls like the hub's channels.
	place, full := a.places.Take(call.LimitKey())
	if full != nil {
		return toolerr.Result(t.Decline(pendingError(full)))
	}
	res, err := a.ask(ctx, params)
	place.Release()
	if err != nil {
		return toolerr.Result(t.Decline(a.askError(ctx, call.Tool, err)))
	}
	return a.settle(call, t, res)
}

// answer is what a retry of protocol 2026-07-28 brings back: the human's
// response, when it comes with the server's own state for this very call.
type answer struct {
	response *mcp.ElicitationResult
	// expired is an answer to this very call that came too late.
	expired bool
	// approvalID names the approval request answered (valid or expired).
	approvalID string
}

// valid reports whether the answer may settle the call.
func (ans answer) valid() bool { return ans.response != nil }

// answered returns the answer a request brings to this very call: a state
// this server signed for the same tool, session, identity and argument
// digest (with no more bytes of arguments), unexpired and not used before.
// Anything else is no answer: a changed call is asked again, and a
// replayed or forged state is charged like any call. The state is used up
// here, before the call is admitted, so that one answer spares one call
// its charge.
func (a *approver) answered(req mcp.CallToolRequest, call guard.Call) answer {
	res := server.ElicitationResponse(req.Params.InputResponses, approvalInputID)
	if req.Params.RequestState == "" || res == nil {
		return answer{}
	}
	st, err := a.states.open(req.Params.RequestState)
	if err != nil || st.Tool != call.Tool || st.Session != call.Session || st.Identity != call.Identity ||
		st.Digest != guard.ArgsDigest(call.Args) || call.ArgBytes > st.Bytes {
		return answer{}
	}
	if a.now().After(st.Expires) {
		return answer{expired: true, approvalID: st.Approval}
	}
	if !a.states.consume(st) {
		return answer{}
	}
	return answer{response: res, approvalID: st.Approval}
}

// ask sends elicitation/create and waits at most the approval timeout.
func (a *approver) ask(ctx context.Context, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	res, err := a.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: params,
	})
	if err == nil && res == nil {
		err = errors.New("empty elicitation result")
	}
	return res, err
}

// askError names why an elicitation/create got no answer.
func (a *approver) askError(ctx context.Context, tool string, err error) *toolerr.Error {
	switch {
	case ctx.Err() != nil:
		return toolerr.New(toolerr.Canceled, "", "the call was cancelled by the client while waiting for approval").WithRule("approval.elicit")
	case errors.Is(err, context.DeadlineExceeded):
		return timeoutError(a.timeout)
	case errors.Is(err, server.ErrElicitationNotSupported):
		return unavailableError(tool, "this transport cannot send requests to the client")
	}
	return unavailableError(tool, "the client could not ask the human: "+err.Error())
}

// settle turns the human's answer into an approval or a refusal.
func (a *approver) settle(call guard.Call, t *guard.Ticket, res *mcp.ElicitationResult) *mcp.CallToolResult {
	if res == nil {
		return toolerr.Result(t.Decline(unavailableError(call.Tool, "the client sent no answer")))
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
	case mcp.ElicitationResponseActionDecline:
		return toolerr.Result(t.Decline(declinedError(call.Tool, "declined")))
	default:
		return toolerr.Result(t.Decline(declinedError(call.Tool, "cancelled")))
	}
	if !identicalChosen(res.Content) {
		return failed(t.Approve("approval.elicit"))
	}
	if call.Session == anonymousSession {
		// Without a session there is no "this session" to remember it for.
		return failed(t.Approve("approval.elicit"))
	}
	if e := t.Approve("approval.elicit.session"); e != nil {
		return toolerr.Result(e)
	}
	a.grant(call.Session, call.Tool+"\x00"+t.Digest())
	return nil
}

// identicalChosen reads the form's approve_identical box.
func identicalChosen(content any) bool {
	m, ok := content.(map[string]any)
	if !ok {
		return false
	}
	v, _ := m[approveIdentical].(bool)
	return v
}

func (a *approver) granted(session, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.grants[session][key]
}

func (a *approver) grant(session, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.grants[session] == nil {
		a.grants[session] = map[string]bool{}
	}
	a.grants[session][key] = true
}

// endSession forgets a session's standing approvals.
func (a *approver) endSession(session string) {
	a.mu.Lock()
	delete(a.grants, session)
	a.mu.Unlock()
}

// canElicit reports whether the client declared that it can show a form:
// per request from 2026-07-28, at initialize before. mcp-go would send the
// request regardless, so this check is what makes a client that cannot
// elicit fail closed instead of hanging or erroring.
func canElicit(ctx context.Context) bool {
	var caps *mcp.ClientCapabilities
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		caps = info.ClientCapabilities
	} else if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		c := cs.GetClientCapabilities()
		caps = &c
	}
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// An empty elicitation object means form mode (the 2025-06-18 shape).
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// failed is the result to send when approving failed, or nil to run the
// call.
func failed(e *toolerr.Error) *mcp.CallToolResult {
	if e == nil {
		return nil
	}
	return toolerr.Result(e)
}

const approvalSwitchHint = "set approval.modes in the config, or --approval TOOL_GLOB=MODE on serve"

func unavailableError(tool, why string) *toolerr.Error {
	return toolerr.New(toolerr.DeniedApprovalUnavailable,
		"This call needs a human's approval and your client cannot ask for it. Use a client with MCP elicitation, or ask the operator to "+approvalSwitchHint+".",
		"tool %q needs approval (approval mode elicit) but no human could be asked: %s", tool, why).WithRule("approval.elicit")
}

func declinedError(tool, how string) *toolerr.Error {
	return toolerr.New(toolerr.DeniedApprovalDeclined,
		"The human did not approve this call. Do not retry it unchanged; ask the user what they want instead.",
		"the human %s the call to %q", how, tool).WithRule("approval.declined")
}

// previewError is the refusal of a call whose action could not be shown.
func previewError(err error) *toolerr.Error {
	e := toolerr.As(err)
	if e.Rule == "" {
		e.Rule = "approval.preview"
	}
	return e
}

func timeoutError(d time.Duration) *toolerr.Error {
	return toolerr.New(toolerr.DeniedApprovalTimeout,
		"Nobody approved the call in time. Ask the user before trying again.",
		"no approval within approval.timeout (%s)", d).WithRule("approval.timeout")
}

// setupApproval resolves every tool's approval mode under cfg.Modes, sets
// the timeout, and warns about tools that will run without asking.
func (s *Server) setupApproval(cfg configs.Approval, log *slog.Logger) error {
	if err := s.guard.ApplyApprovalModes(cfg.Modes); err != nil {
		return err
	}
	s.approval.timeout = cfg.Timeout
	s.approval.places.SetBounds(approvals.Bounds{PerIdentity: cfg.MaxPending.PerIdentity, Total: cfg.MaxPending.Total})
	if len(cfg.Channel) > 0 {
		s.approval.channels = cfg.Channel
	}
	logApprovalWidenings(log, s.guard, s.tools)
	return nil
}

// logApprovalWidenings warns, at start, about every tool that requires
// approval but will run without asking because the operator set allow.
func logApprovalWidenings(log *slog.Logger, g *guard.Guard, toolset []tools.Tool) {
	for _, t := range toolset {
		mode, rule, _ := g.ApprovalOf(t.Tool.Name)
		if t.Meta.RequiresApproval && mode == guard.ApprovalAllow && g.Allowed(t.Tool.Name) {
			log.Warn("approval widened: tool runs without asking the human", "tool", t.Tool.Name, "rule", rule)
		}
	}
}

// ApprovalOf returns a tool's approval mode and the rule that set it.
func (s *Server) ApprovalOf(tool string) (guard.ApprovalMode, string) {
	mode, rule, _ := s.guard.ApprovalOf(tool)
	return mode, rule
}
