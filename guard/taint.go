package guard

import (
	"fmt"
	"slices"
	"sync"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// A chain of calls each harmless alone (read a file that holds a key,
// then post to a web hook) is an exfiltration the per-call checks cannot
// see. The guard therefore remembers, per session, that a call's result
// held secrets (the output filter redacted some): redaction keeps the
// secret from the model, but not what else the same file held, nor what
// the model inferred. From then on a call in that session to a tool that
// sends its arguments out (it writes, reaches the network, runs a process
// or calls an upstream: see sendsOut) is tainted, and policy.taint says
// what happens: approve (the default) asks a human, as approval.elicit
// does; refuse denies it; off forgets nothing but decides nothing either.
// The taint lasts until the session ends. Read-only tools are unaffected.

// Taint modes (policy.taint).
const (
	TaintApprove = "approve"
	TaintRefuse  = "refuse"
	TaintOff     = "off"
)

// maxTainted bounds the sessions remembered; past it the oldest is
// forgotten (sessions normally end and are forgotten: EndSession).
const maxTainted = 1 << 16

// taints are the tainted sessions, each with why.
type taints struct {
	mu    sync.Mutex
	why   map[string]string
	order []string
	// staged are the scripts each session staged (chain.go), newest last.
	staged map[string][]string
}

// maxStaged bounds the scripts remembered per session.
const maxStaged = 64

// stage remembers the scripts session staged.
func (t *taints) stage(session string, paths []string) {
	if len(paths) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.staged == nil {
		t.staged = map[string][]string{}
	}
	if _, ok := t.staged[session]; !ok && len(t.staged) >= maxTainted {
		return
	}
	l := t.staged[session]
	for _, p := range paths {
		if !slices.Contains(l, p) {
			l = append(l, p)
		}
	}
	if len(l) > maxStaged {
		l = l[len(l)-maxStaged:]
	}
	t.staged[session] = l
}

// stagedBy returns the scripts session staged.
func (t *taints) stagedBy(session string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.staged[session]
}

// mark taints session, unless it already is.
func (t *taints) mark(session, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.why == nil {
		t.why = map[string]string{}
	}
	if _, ok := t.why[session]; ok {
		return
	}
	if len(t.order) >= maxTainted {
		delete(t.why, t.order[0])
		t.order = t.order[1:]
	}
	t.why[session] = why
	t.order = append(t.order, session)
}

// of returns why session is tainted, or "".
func (t *taints) of(session string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.why[session]
}

// forget drops session's taint.
func (t *taints) forget(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.staged, session)
	if _, ok := t.why[session]; ok {
		delete(t.why, session)
		for i, s := range t.order {
			if s == session {
				t.order = append(t.order[:i], t.order[i+1:]...)
				break
			}
		}
	}
}

// taintAfter taints call's session when its result had secrets
// redacted, or its arguments named a credential's variable or an
// autostart location, and remembers the scripts it staged (chain.go).
func (g *Guard) taintAfter(call Call, redactions map[string]int) {
	if g.cfg.Taint == TaintOff || call.listing {
		return
	}
	n := 0
	for _, c := range redactions {
		n += c
	}
	if n > 0 {
		g.taint.mark(call.Session, fmt.Sprintf("%s returned %d secret(s), redacted", call.Tool, n))
	}
	if matchesAny(g.cfg.PrivateTools, call.Tool) {
		g.taint.mark(call.Session, call.Tool+" reads private data (policy.private_tools)")
	}
	why, staged := flowOf(call.Args)
	if why != "" {
		g.taint.mark(call.Session, call.Tool+" ran and "+why)
	}
	g.taint.stage(call.Session, staged)
}

// checkTaint is part of the approval step: a call that sends out, in a
// tainted session, is asked about or refused by policy.taint.
func checkTaint(in *input) (Decision, bool) {
	if in.call.tainted == "" || in.call.Trusted || !sendsOut(in.tool.Capabilities) {
		return Decision{}, false
	}
	if in.call.taintMode == TaintRefuse {
		return deny("policy.taint", toolerr.New(toolerr.DeniedNotAllowed,
			"This session has touched secrets, an autostart location or a script it wrote; nothing may be sent out from it. Start a new session for this step, or ask the operator.",
			"tool %q sends its arguments out, and this session is tainted (%s); policy.taint refuses such calls", in.call.Tool, in.call.tainted)), true
	}
	d := Decision{Outcome: NeedsApproval, Rule: "policy.taint"}
	d.note = "tainted: " + in.call.tainted
	return d, true
}

// tainted sets why call's session is tainted, under policy.taint.
func (g *Guard) tainted(call *Call) {
	call.taintMode = g.cfg.Taint
	if call.taintMode == "" {
		call.taintMode = TaintApprove
	}
	// A private-data tool is a read of its source, not a way out: the
	// taint does not stop it (list a tool that also sends elsewhere).
	if call.taintMode == TaintOff || matchesAny(g.cfg.PrivateTools, call.Tool) {
		return
	}
	call.tainted = g.taint.of(call.Session)
	// A script staged and then named is asked about only for an
	// upstream's tool, whose reach the guard cannot see; toolwarden's own
	// tools run a script in the sandbox, whose network is the allowlist
	// and the egress proxy's data-loss checks.
	if t := g.tools[call.Tool]; call.tainted == "" && t != nil && upstreamTool(t.Capabilities) {
		if p := runsStaged(call.Args, g.taint.stagedBy(call.Session)); p != "" {
			call.tainted = "it names " + p + ", a script this session wrote"
		}
	}
}

// taintUnavailable is e, when no human could be asked about a call that
// asked only because its session is tainted, restated to say so: the
// server's message speaks of approval modes, which did not ask.
func (t *Ticket) taintUnavailable(e *toolerr.Error) *toolerr.Error {
	if t.rule != "policy.taint" || e == nil || e.Code != toolerr.DeniedApprovalUnavailable {
		return e
	}
	return toolerr.New(toolerr.DeniedApprovalUnavailable,
		"This session has touched secrets, an autostart location or a script it wrote, so sending anything out from it needs a human's approval, which your client cannot give. "+
			"Start a new session for this step, use a client with MCP elicitation, or ask the operator (policy.taint).",
		"tool %q sends its arguments out from a tainted session (%s), which policy.taint asks a human about, but no human could be asked: %s",
		t.call.Tool, t.call.tainted, e.Message).WithRule("policy.taint")
}
