package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// linkOpener is a client's URL-mode elicitation handler: it shows the
// human the link (here: opens it, reads the page, and decides as the
// human would) and answers with action.
type linkOpener struct {
	t      *testing.T
	action mcp.ElicitationResponseAction
	decide string // approve, deny or "" (leave it)

	mu    sync.Mutex
	asked []mcp.ElicitationParams
}

func (o *linkOpener) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	o.mu.Lock()
	o.asked = append(o.asked, req.Params)
	decide, action := o.decide, o.action
	o.mu.Unlock()
	if decide != "" {
		go func() {
			hc, base := pageSession(o.t, req.Params.URL)
			form := pageForm(o.t, hc, base)
			form.Set("action", decide)
			if code := postDecision(o.t, hc, base, originOf(base), form); code != http.StatusSeeOther {
				o.t.Errorf("decision on the linked page: HTTP %d", code)
			}
		}()
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action}}, nil
}

// urlClient starts `serve --approval-page` with a client that declares
// only URL-mode elicitation.
func urlClient(t *testing.T, env []string, h *linkOpener, completed chan<- string, args ...string) *client.Client {
	t.Helper()
	tr := transport.NewStdio(binary, env, append([]string{"serve", "--approval-page"}, args...)...)
	c := client.NewClient(tr, client.WithDiscoverTimeout(30*time.Second), client.WithElicitationHandler(h))
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationElicitationComplete) {
			id, _ := n.Params.AdditionalFields["elicitationId"].(string)
			completed <- id
		}
	})
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = legacyProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "url-elicitation", Version: "1"}
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{URL: &struct{}{}}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	return c
}

// TestURLElicitation: a client that declares only URL-mode elicitation
// is sent a link to the approval page for this one call; the decision
// made there settles the call, and the client is told it is complete. A
// client that declines the link denies the call.
func TestURLElicitation(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	h := &linkOpener{t: t, action: mcp.ElicitationResponseActionAccept, decide: "approve"}
	completed := make(chan string, 4)
	c := urlClient(t, env, h, completed, "--workspace", ws)

	require.Empty(t, write(t, c, "notes/url.txt", "approved by link\n"))
	require.Equal(t, "approved by link\n", readWS(ws, "notes/url.txt"))
	h.mu.Lock()
	require.Len(t, h.asked, 1)
	p := h.asked[0]
	h.mu.Unlock()
	require.Equal(t, mcp.ElicitationModeURL, p.Mode)
	require.True(t, strings.HasPrefix(p.URL, "http://127.0.0.1:"), p.URL)
	require.Contains(t, p.URL, "/call?")
	require.Contains(t, p.Message, "write_file")
	select {
	case id := <-completed:
		require.Equal(t, p.ElicitationID, id)
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/elicitation/complete")
	}

	h.mu.Lock()
	h.decide, h.action = "", mcp.ElicitationResponseActionDecline
	h.mu.Unlock()
	require.Equal(t, "denied.approval_declined", write(t, c, "notes/declined.txt", "no\n"))
	require.Equal(t, "<missing>", readWS(ws, "notes/declined.txt"))
}
