package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/approvals"
)

// canElicitURL reports whether a client of a protocol before 2026-07-28
// declared URL-mode elicitation (2025-11-25) at initialize. A 2026-07-28
// request cannot be sent a server request while its call waits.
func canElicitURL(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return false
	}
	cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return false
	}
	caps := cs.GetClientCapabilities()
	return caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// trustsClient reports whether approval.channel lists elicit: the
// operator lets the client ask the human.
func (a *approver) trustsClient() bool { return slices.Contains(a.channels, channelElicit) }

// offerLink sends, to a client that declared URL-mode elicitation, the
// approval page's link to this one call, so that it shows the human a
// link instead of nothing. The decision still comes from the page: the
// client's accept only says the human was shown the link, its decline or
// cancel denies the call. stop ends the offer and, when it was sent, tells
// the client the approval is over (notifications/elicitation/complete).
//
// The link is offered only when approval.channel lists elicit. Whoever
// holds the link can open it and decide, so sending it is trusting the
// client to hand it to the human; an operator who left elicit out (say
// [page]) trusts no client, and a same-host client given the link could
// approve its own call (issue 41).
func (a *approver) offerLink(ctx context.Context, req approvals.Request) (stop func()) {
	if !a.trustsClient() || !canElicitURL(ctx) {
		return func() {}
	}
	link := a.hub.Link(req)
	if link == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := a.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params: mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, ElicitationID: req.ID, URL: link,
				Message: fmt.Sprintf("toolwarden asks you to approve a call to %s. Open the link to see the exact action and approve or deny it; the link works once and only for this call.", req.Tool)},
		})
		if err == nil && res != nil && res.Action != mcp.ElicitationResponseActionAccept {
			_ = a.hub.Decide(req.ID, req.Digest, approvals.Decision{Channel: "page", By: "client url elicitation: " + string(res.Action),
				Reason: fmt.Sprintf("the client answered %s to the approval page's link", res.Action)})
		}
	}()
	return func() {
		cancel()
		<-done
		_ = a.mcp.SendElicitationComplete(context.WithoutCancel(ctx), server.ClientSessionFromContext(ctx), req.ID)
	}
}
