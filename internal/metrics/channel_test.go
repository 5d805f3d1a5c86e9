package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/approvals/socket"
	"github.com/toolwarden/toolwarden/approvals/webhook"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard"
)

// decide makes the hub wait for one call and lets answer settle it on a
// real channel; it returns the decision the hub handed the waiting call.
func decide(t *testing.T, hub *approvals.Hub, id string, answer func(id, digest string)) approvals.Decision {
	t.Helper()
	now := time.Now()
	req := approvals.Request{ID: id, Tool: "write_file", Digest: "d-" + id, Preview: "Create file x", Created: now, Expires: now.Add(time.Minute)}
	got := make(chan approvals.Decision, 1)
	go func() { d, _ := hub.Ask(context.Background(), req); got <- d }()
	require.Eventually(t, func() bool { _, ok := hub.Get(id); return ok }, 5*time.Second, time.Millisecond)
	answer(req.ID, req.Digest)
	return <-got
}

// auditLine is the line mcpserver's askHub writes for d: approved under
// rule "approval."+channel, declined under approval.declined, decided_by
// d.By either way.
func auditLine(d approvals.Decision) guard.Event {
	e := audit.Entry{Tool: "write_file", Outcome: guard.Approved, Rule: "approval." + d.Channel, DecidedBy: d.By}
	if !d.Approve {
		e.Outcome, e.Rule = guard.Declined, "approval.declined"
	}
	return guard.Event{Entry: e}
}

// TestApprovalChannelOfRealDecisions: decisions made through the terminal
// socket and the webhook callback, with the strings those channels really
// write, are counted under their channel, approved and declined alike.
func TestApprovalChannelOfRealDecisions(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	hub := approvals.New()
	dir, err := socket.Dir()
	require.NoError(t, err)
	srv, err := socket.Listen(hub, dir)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = srv.Serve(ctx) }()
	terminal := func(approve bool) func(id, digest string) {
		return func(id, digest string) {
			c, err := socket.Dial(srv.Path())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.Decide(id, digest, approve, ""))
		}
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	callback := webhook.New(hub, "http://127.0.0.1:1/", secret, "", nil).Handler()
	hook := func(action, by string) func(id, digest string) {
		return func(id, digest string) {
			body, err := json.Marshal(webhook.Decision{ID: id, Digest: digest, Action: action, By: by})
			require.NoError(t, err)
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			now := time.Now()
			r.Header.Set(webhook.TimestampHeader, strconv.FormatInt(now.Unix(), 10))
			r.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, now, body))
			w := httptest.NewRecorder()
			callback.ServeHTTP(w, r)
			require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
		}
	}
	m := New([]string{"write_file"})
	for i, c := range []struct {
		answer  func(id, digest string)
		outcome string
		channel string
	}{
		{terminal(true), "approved", "terminal"},
		{terminal(false), "declined", "terminal"},
		{hook("approve", ""), "approved", "webhook"},
		{hook("approve", "alice"), "approved", "webhook"},
		{hook("deny", "bob: on call"), "declined", "webhook"},
	} {
		d := decide(t, hub, "call-"+strconv.Itoa(i), c.answer)
		ev := auditLine(d)
		require.Equal(t, c.channel, channel(ev.Entry.DecidedBy, ev.Entry.Rule), "decided_by %q, rule %q", ev.Entry.DecidedBy, ev.Entry.Rule)
		m.Observe(ev)
	}
	f := scrape(t, m)
	count := func(outcome, channel string) float64 {
		return value(t, f, "toolwarden_approvals_total", map[string]string{"outcome": outcome, "channel": channel})
	}
	require.Equal(t, 1.0, count("approved", "terminal"))
	require.Equal(t, 1.0, count("declined", "terminal"))
	require.Equal(t, 2.0, count("approved", "webhook"))
	require.Equal(t, 1.0, count("declined", "webhook"))
}

// TestApprovalChannelOfOtherLines: the lines no hub channel writes, with
// the rules and decided_by the server gives them.
func TestApprovalChannelOfOtherLines(t *testing.T) {
	for _, c := range []struct{ decidedBy, rule, want string }{
		{"page", "approval.page", "page"},
		{"page", "approval.declined", "page"},
		// The client refused the page's link it was sent by URL-mode
		// elicitation (mcpserver/approvalurl.go): a decision of the page.
		{"client url elicitation: decline", "approval.declined", "page"},
		{"", "approval.elicit", "elicit"},
		{"", "approval.elicit.session", "elicit"},
		{"", "approval.session", "session"},
		{"", "approval.timeout", "-"},
		{"", "approval.declined", "-"}, // declined in the client's form: no decided_by
		{"somebody", "approval.somewhere", "-"},
	} {
		require.Equal(t, c.want, channel(c.decidedBy, c.rule), "decided_by %q, rule %q", c.decidedBy, c.rule)
	}
}
