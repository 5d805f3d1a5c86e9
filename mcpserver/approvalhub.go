package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// The approval channels (approval.channel).
const (
	channelElicit   = "elicit"
	channelPage     = "page"
	channelTerminal = "terminal"
	channelWebhook  = "webhook"
	// channelHub stands for page, terminal and webhook: a call that waits in the
	// hub is shown on both, and the first decision settles it.
	channelHub  = "hub"
	channelNone = ""
)

// maxPageActionBytes bounds the action the page and the terminal show.
// They show it whole (the page folds all but its head), so the bound is
// wider than an elicitation form's; a longer action is not asked at all.
const maxPageActionBytes = 4 << 20

// defaultMaxPending applies until Build sets approval.max_pending; it is
// configs/default.yaml's.
var defaultMaxPending = approvals.Bounds{PerIdentity: 8, Total: 64}

// channelFor picks how to ask the human about this call: the first
// channel of approval.channel that can, elicit only when the client
// declared elicitation.
func (a *approver) channelFor(ctx context.Context) string {
	for _, c := range a.channels {
		switch {
		case c == channelElicit && canElicit(ctx):
			return channelElicit
		case hubChannel(c) && a.hub != nil:
			return channelHub
		}
	}
	return channelNone
}

// hubChannel reports whether channel c waits in the hub.
func hubChannel(c string) bool {
	return c == channelPage || c == channelTerminal || c == channelWebhook
}

// OpenApprovals makes the hub of calls waiting on the page, the terminal
// or the webhook, and returns it; nil when approval.channel lists none of
// them. Only a command that serves those channels (serve) opens it: until
// then they cannot ask, so a call is never left waiting where nobody
// looks. Call it before serving calls.
func (s *Server) OpenApprovals() *approvals.Hub {
	if s.approval.hub == nil && slices.ContainsFunc(s.approval.channels, hubChannel) {
		s.approval.hub = approvals.New()
		s.approval.hub.SharePlaces(s.approval.places)
		if s.approval.joinFleet != nil {
			s.approval.joinFleet(s.approval.hub)
		}
	}
	return s.approval.hub
}

// Approvals returns the hub OpenApprovals made, or nil.
func (s *Server) Approvals() *approvals.Hub { return s.approval.hub }

// ApprovalChannels describes approval.channel in effect, in words.
func (s *Server) ApprovalChannels() []string {
	out := make([]string, 0, len(s.approval.channels))
	for _, c := range s.approval.channels {
		switch c {
		case channelElicit:
			out = append(out, "elicit: the client's form, when it declared elicitation")
		case channelPage:
			out = append(out, "page: the local approval page (serve prints its URL to stderr)")
		case channelTerminal:
			out = append(out, "terminal: toolwarden approvals list|approve|deny|watch over the control socket")
		case channelWebhook:
			out = append(out, "webhook: signed POST to approval.webhook.url, signed decision on the callback")
		}
	}
	if !slices.ContainsFunc(s.approval.channels, hubChannel) {
		out = append(out, "otherwise: denied.approval_unavailable")
	}
	return out
}

// askHub shows the call on the page and the terminal and waits for the
// first decision, at most the approval timeout. The decision names the
// call's approval ID and argument digest, so it settles this call only.
func (a *approver) askHub(ctx context.Context, call guard.Call, t *guard.Ticket, raw json.RawMessage) *mcp.CallToolResult {
	// The place is taken before the preview is built, so a call past
	// approval.max_pending costs nothing but its refusal.
	place, full := a.hub.Take(call.LimitKey()) // in a.places, shared with the form
	if full != nil {
		return toolerr.Result(t.Decline(pendingError(full)))
	}
	defer place.Release()
	action, err := a.preview(ctx, call.Tool, raw)
	if err != nil {
		return toolerr.Result(t.Decline(previewError(err)))
	}
	action = displaySafe(action)
	if len(action) > maxPageActionBytes {
		return toolerr.Result(t.Decline(tooLargeToAsk(call.Tool, len(action), maxPageActionBytes, "approval.max_page_bytes")))
	}
	now := a.now()
	req := approvals.Request{ID: t.ApprovalID(), Tool: call.Tool, Digest: t.Digest(),
		Identity: call.Identity, Session: call.Session, Preview: action, Created: now, Expires: now.Add(a.timeout)}
	stopOffer := func() {}
	d, err := place.AskThen(ctx, req, func() { stopOffer = a.offerLink(ctx, req) })
	stopOffer()
	switch {
	case errors.Is(err, approvals.ErrTimeout):
		return toolerr.Result(t.Decline(timeoutError(a.timeout)))
	case ctx.Err() != nil:
		return toolerr.Result(t.Decline(toolerr.New(toolerr.Canceled, "",
			"the call was cancelled by the client while waiting for approval").WithRule("approval.channel")))
	case err != nil:
		return toolerr.Result(t.Decline(unavailableError(call.Tool, err.Error())))
	case !d.Approve:
		how := "declined"
		if d.Reason != "" {
			how = fmt.Sprintf("declined (reason: %q)", d.Reason)
		}
		return toolerr.Result(t.DeclineBy(declinedError(call.Tool, how), d.By))
	}
	return failed(t.ApproveBy("approval."+d.Channel, d.By))
}

// pendingError refuses a call past approval.max_pending, naming the cap
// it reached.
func pendingError(full *approvals.FullError) *toolerr.Error {
	whose, rule := "of this identity", "approval.max_pending.per_identity"
	if full.Total {
		whose, rule = "of all identities", "approval.max_pending.total"
	}
	return toolerr.New(toolerr.LimitExceeded,
		"Wait until your calls that already wait for approval are decided (or cancel some) before sending more; the human decides them one at a time.",
		"%d calls %s already wait for a human's approval, the most %s allows, so this one is not asked", full.Limit, whose, rule).
		WithRule(rule)
}
