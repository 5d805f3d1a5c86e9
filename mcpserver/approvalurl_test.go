package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestApprovalURLLinkOnlyWhenElicitListed: the page's per-call link goes
// to a client that declared URL-mode elicitation only when
// approval.channel lists elicit; with [page] the client is not trusted
// and never sees it (it could open it and approve its own call).
func TestApprovalURLLinkOnlyWhenElicitListed(t *testing.T) {
	const link = "http://127.0.0.1:9/call?id=x"
	for _, tc := range []struct {
		channels []string
		linked   bool
	}{{[]string{"page"}, false}, {[]string{"page", "terminal"}, false}, {[]string{"elicit", "page"}, true}} {
		t.Run(strings.Join(tc.channels, ","), func(t *testing.T) {
			f := newFixture(t)
			withApproval(f, time.Minute)
			f.cfg.Approval.Channel = tc.channels
			b := f.server(t)
			hub := b.OpenApprovals()
			hub.SetLinker(func(approvals.Request) string { return link })
			h := &human{answer: accept(false)}
			c := kind(t, "inprocess-2025").open(t, b, client.WithElicitationHandler(h), client.WithClientCapabilities(
				mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}}))

			res := callAsync(t, c, "write_file", writeArgs("x"))
			req := waiting(t, hub)
			if tc.linked {
				require.Eventually(t, func() bool { return len(h.questions()) == 1 }, 10*time.Second, time.Millisecond)
				q := h.questions()[0].Params
				require.Equal(t, mcp.ElicitationModeURL, q.Mode)
				require.Equal(t, link, q.URL)
			} else {
				time.Sleep(200 * time.Millisecond) // room for a link that must not come
				require.Empty(t, h.questions(), "the client was sent the page's link")
			}
			require.NoError(t, hub.Decide(req.ID, req.Digest, approvals.Decision{Channel: "page", By: "page"}))
			require.Equal(t, toolerr.DeniedApprovalDeclined, errorOf(t, <-res).Code)
		})
	}
}
