package guard

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// taintGuard is newArgGuard under policy.taint mode.
func taintGuard(t *testing.T, mode string) *Guard {
	g := newArgGuard(t, ArgScan{Secrets: ArgRefuse, Markers: ArgFlag}, &memAuditor{})
	g.cfg.Taint = mode
	return g
}

// readSecret has find_note (read-only) return a secret in session s: the
// filter redacts it, and the session is tainted.
func readSecret(t *testing.T, g *Guard, session string) {
	var ran atomic.Int64
	call := argCall(t, "find_note", `{"path":"notes/deploy.md"}`)
	call.Session = session
	res := serve(g, call, countingHandler(&ran, "deploy with "+fakesecret.All(2)[0].Line))
	require.False(t, res.IsError)
	require.EqualValues(t, 1, ran.Load())
}

func sendCall(t *testing.T, session string) Call {
	c := argCall(t, "send_msg", `{"content":"status: done"}`)
	c.Session = session
	return c
}

// After a result held secrets, a call in the same session that sends out
// asks a human (approve), or is refused (refuse); reads and other
// sessions are not affected, and the taint ends with the session.
func TestTaintAfterSecrets(t *testing.T) {
	g := taintGuard(t, "")
	// Before: nothing asks.
	ticket, denial := g.Admit(sendCall(t, "s"))
	require.Nil(t, denial)
	require.False(t, ticket.NeedsApproval())
	ticket.Finish(nil, nil)

	readSecret(t, g, "s")
	ticket, denial = g.Admit(sendCall(t, "s"))
	require.Nil(t, denial)
	require.True(t, ticket.NeedsApproval(), "a tainted session's send must ask")
	d := g.Explain(sendCall(t, "s"))
	require.Equal(t, NeedsApproval, d.Outcome)
	require.Equal(t, "policy.taint", d.Rule)
	require.Contains(t, d.Trace[len(d.Trace)-1].Detail, "find_note returned 1 secret(s), redacted")

	read := argCall(t, "find_note", `{"path":"notes/a.md"}`)
	read.Session = "s"
	require.Equal(t, Allow, g.Explain(read).Outcome, "reads stay free")
	require.Equal(t, Allow, g.Explain(sendCall(t, "other")).Outcome, "other sessions stay free")

	g.EndSession("s")
	require.Equal(t, Allow, g.Explain(sendCall(t, "s")).Outcome, "the taint ends with the session")
}

func TestTaintRefuseAndOff(t *testing.T) {
	g := taintGuard(t, TaintRefuse)
	readSecret(t, g, "s")
	var ran atomic.Int64
	res := serve(g, sendCall(t, "s"), countingHandler(&ran, "sent"))
	e := errorOf(t, res)
	require.Equal(t, toolerr.DeniedNotAllowed, e.Code)
	require.Equal(t, "policy.taint", e.Rule)
	require.Zero(t, ran.Load(), "the handler ran on a refused call")

	g = taintGuard(t, TaintOff)
	readSecret(t, g, "s")
	require.Equal(t, Allow, g.Explain(sendCall(t, "s")).Outcome)
}

// A clean result taints nothing.
func TestTaintNotFromCleanResults(t *testing.T) {
	g := taintGuard(t, "")
	var ran atomic.Int64
	call := argCall(t, "find_note", `{"path":"notes/a.md"}`)
	call.Session = "s"
	serve(g, call, countingHandler(&ran, "no secrets here, only AKIA-style words"))
	require.Equal(t, Allow, g.Explain(sendCall(t, "s")).Outcome)
}

// When no human can be asked, the denial names the taint, not an
// approval mode.
func TestTaintUnavailableNamesTaint(t *testing.T) {
	g := taintGuard(t, "")
	readSecret(t, g, "s")
	ticket, denial := g.Admit(sendCall(t, "s"))
	require.Nil(t, denial)
	e := ticket.Decline(toolerr.New(toolerr.DeniedApprovalUnavailable, "hint", "no client").WithRule("approval.elicit"))
	require.Equal(t, "policy.taint", e.Rule)
	require.Contains(t, e.Message, "tainted session (find_note returned 1 secret(s), redacted)")
}
