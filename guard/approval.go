package guard

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// ApprovalMode says whether a call to a tool needs a human's approval.
type ApprovalMode string

// Approval modes, from the least to the most restrictive.
const (
	// ApprovalAllow runs the tool without asking: the operator trusts it.
	ApprovalAllow ApprovalMode = "allow"
	// ApprovalElicit asks the human through MCP elicitation before each call.
	ApprovalElicit ApprovalMode = "elicit"
	// ApprovalDeny never runs the tool for a model: no approval can be given.
	ApprovalDeny ApprovalMode = "deny"
)

// Outcomes of the approval step in the audit log.
const (
	Approved Outcome = "approved"
	Declined Outcome = "declined"
)

// ParseApprovalMode checks a mode name.
func ParseApprovalMode(s string) (ApprovalMode, error) {
	switch m := ApprovalMode(s); m {
	case ApprovalAllow, ApprovalElicit, ApprovalDeny:
		return m, nil
	}
	return "", fmt.Errorf("%q is not an approval mode (allow, elicit or deny)", s)
}

// rank orders modes by restriction; an unknown mode ranks as deny.
func (m ApprovalMode) rank() int {
	switch m {
	case ApprovalAllow:
		return 0
	case ApprovalElicit:
		return 1
	}
	return 2
}

// ResolveApproval gives a tool's approval mode and the rule that set it.
// Without a matching rule, a tool that requires approval elicits and any
// other runs (rule "approval.default"). Where rules match, the most
// restrictive of them wins whatever its source, so deny beats elicit beats
// allow; among equals the smallest glob names the rule, for a stable trace.
func ResolveApproval(tool string, requiresApproval bool, rules map[string]ApprovalMode) (ApprovalMode, string) {
	globs := make([]string, 0, len(rules))
	for g := range rules {
		globs = append(globs, g)
	}
	slices.Sort(globs)
	mode, rule := ApprovalMode(""), ""
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, tool); ok && (mode == "" || rules[g].rank() > mode.rank()) {
			mode, rule = rules[g], fmt.Sprintf("approval.modes:%q=%s", g, rules[g])
		}
	}
	if mode != "" {
		return mode, rule
	}
	if requiresApproval {
		return ApprovalElicit, "approval.default"
	}
	return ApprovalAllow, "approval.default"
}

// mode is the tool's resolved mode; a tool whose mode was never resolved
// falls back to its requires_approval flag, so it fails closed.
func (t *ToolInfo) mode() ApprovalMode {
	if t.Approval != "" {
		return t.Approval
	}
	if t.RequiresApproval {
		return ApprovalElicit
	}
	return ApprovalAllow
}

// checkApproval is the last step of Decide: a valid call to a tool in
// elicit mode needs a human's approval, one in deny mode is refused. The
// operator's trusted calls never ask.
func checkApproval(in *input) Decision {
	if in.call.Trusted {
		return pass("approval.not_required")
	}
	if d, ok := checkTaint(in); ok && in.approval != ApprovalDeny {
		return d
	}
	switch in.approval {
	case ApprovalAllow:
		return pass("approval.not_required")
	case ApprovalElicit:
		return Decision{Outcome: NeedsApproval, Rule: "approval.elicit"}
	}
	return deny("approval.deny", toolerr.New(toolerr.DeniedNotAllowed,
		"Do not call this tool; the operator can change its mode in approval.modes or with --approval.",
		"tool %q is set to approval mode deny: no approval can be given for it", in.call.Tool))
}

// NeedsApproval reports whether the call must be approved (Approve) or
// refused (Decline) before it runs.
func (t *Ticket) NeedsApproval() bool { return t.pending }

// Digest is the SHA-256 of the call's arguments that an approval binds to.
func (t *Ticket) Digest() string { return t.digest }

// ApprovalID names the approval request of a call that needed approval
// ("" for one that did not): a 2026-07-28 retry brings it back in
// Call.ApprovalID.
func (t *Ticket) ApprovalID() string { return t.call.ApprovalID }

// pending records that a call waits for approval, under a new approval
// request, and returns its ticket. The retry that answers a request
// (Call.ApprovalID set) was recorded as needing approval when it asked;
// its Approve or Decline line, which names the request, is its decision.
func (g *Guard) pending(call Call, digest, rule string, start time.Time) (*Ticket, *toolerr.Error) {
	if call.ApprovalID == "" {
		call.ApprovalID = newApprovalID()
		if err := g.record(call, digest, rule, NeedsApproval, "", start); err != nil {
			return nil, auditDenial(err)
		}
	}
	return &Ticket{g: g, call: call, digest: digest, start: start, pending: true, rule: rule}, nil
}

// newApprovalID returns a random name for an approval request.
func newApprovalID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Approve records that a human approved the call, by the named rule (e.g.
// "approval.elicit" or "approval.session"), and lets it run. (It was
// counted against the limits when admitted.) It fails closed when the
// audit line cannot be written.
func (t *Ticket) Approve(rule string) *toolerr.Error { return t.ApproveBy(rule, "") }

// ApproveBy is Approve naming who approved, on which channel, in the
// audit line (Entry.DecidedBy).
func (t *Ticket) ApproveBy(rule, by string) *toolerr.Error {
	e := entry(t.call, t.digest, rule, Approved, "", t.start)
	e.DecidedBy = by
	if err := t.g.append(e); err != nil {
		return auditDenial(err)
	}
	t.pending = false
	return nil
}

// Decline records that the call was not approved and returns e, the error
// the model receives. The call must not run.
func (t *Ticket) Decline(e *toolerr.Error) *toolerr.Error { return t.DeclineBy(e, "") }

// DeclineBy is Decline naming who refused, on which channel, in the
// audit line (Entry.DecidedBy).
func (t *Ticket) DeclineBy(e *toolerr.Error, by string) *toolerr.Error {
	e = t.taintUnavailable(e)
	line := entry(t.call, t.digest, e.Rule, Declined, string(e.Code), t.start)
	line.DecidedBy = by
	_ = t.g.append(line)
	return e
}

// ApplyApprovalModes resolves each tool's approval mode under modes
// (tool-name glob → allow, elicit or deny). Call it before the guard
// serves calls.
func (g *Guard) ApplyApprovalModes(modes map[string]string) error {
	rules := make(map[string]ApprovalMode, len(modes))
	for glob, m := range modes {
		mode, err := ParseApprovalMode(m)
		if err != nil {
			return fmt.Errorf("approval.modes %q: %w", glob, err)
		}
		if !doublestar.ValidatePattern(glob) {
			return fmt.Errorf("approval.modes: invalid tool-name glob %q", glob)
		}
		rules[glob] = mode
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.approvalRules = rules
	for _, t := range g.tools {
		t.Approval, t.ApprovalRule = ResolveApproval(t.Name, t.RequiresApproval, rules)
	}
	return nil
}

// ApprovalOf returns a known tool's approval mode and the rule that set it.
func (g *Guard) ApprovalOf(tool string) (ApprovalMode, string, bool) {
	t := g.tool(tool)
	if t == nil {
		return "", "", false
	}
	return t.mode(), t.ApprovalRule, true
}
