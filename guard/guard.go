package guard

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Auditor records decisions. *audit.Log is the real one; tests use fakes to
// prove the guard fails closed when recording fails.
type Auditor interface {
	Append(audit.Entry) error
}

// Config is the guard's configuration.
type Config struct {
	// Now is the clock of the rate limits; nil means time.Now.
	Now func() time.Time
	// RequireTrust are tool-name globs of more tools that only trusted
	// calls may run (policy.require_trust).
	RequireTrust []string

	Policy         Policy
	Limits         Limits
	MaxOutputBytes int // per call
	CallTimeout    time.Duration
	// OutputFilter filters every result; nil means the default filter.
	OutputFilter *outfilter.Filter
	// Arguments scans free-text arguments before a call is admitted
	// (argscan.go); a nil Filter turns it off.
	Arguments ArgScan
	// Identities are the identities rules: extra, narrowing policy layers
	// for the callers they match.
	Identities []IdentityLayer
	// Usage keeps the identities' usage; nil means this process's memory.
	Usage UsageStore
	// ResolvePath, when set, gives the workspace path a path resolves to
	// through symlinks, so fs capabilities are checked on both (see
	// Policy.WithPathResolver).
	ResolvePath func(string) (string, bool)
	// Taint is policy.taint: what a call that sends out is met with in a
	// session whose results held secrets (taint.go); "" is approve.
	Taint string
	// PrivateTools are tool-name globs of tools that read private data
	// (policy.private_tools): a call to one taints its session.
	PrivateTools []string
}

// Guard holds the policy, the tools it knows, session usage and the audit log.
type Guard struct {
	cfg Config
	// mu guards tools and applied, which SetTools changes while the
	// guard serves; a ToolInfo is never changed once published.
	mu        sync.RWMutex
	tools     map[string]*ToolInfo
	validator *Validator
	audit     Auditor
	// obs, when set, sees each audit line (SetObserver).
	obs Observer

	// applied holds the per-tool limits of each known tool.
	applied map[string][]ToolLimits
	usage   UsageStore
	// taint holds the sessions whose results held secrets.
	taint taints
	// approvalRules are approval.modes (ApplyApprovalModes), for the tools
	// SetTools adds later.
	approvalRules map[string]ApprovalMode
	// filter replaces cfg.OutputFilter once SetToolNames learnt tool
	// names made known while the guard serves.
	filter atomic.Pointer[outfilter.Filter]
	// argFilter replaces cfg.Arguments.Filter likewise.
	argFilter atomic.Pointer[outfilter.Filter]
}

// New builds a guard over tools.
func New(cfg Config, tools []ToolInfo, v *Validator, audit Auditor) *Guard {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ResolvePath != nil {
		cfg.Policy = cfg.Policy.WithPathResolver(cfg.ResolvePath)
	}
	if cfg.Policy.later == nil {
		cfg.Policy.later = &laterGrants{}
	}
	g := &Guard{cfg: cfg, tools: map[string]*ToolInfo{}, validator: v, audit: audit, usage: cfg.Usage}
	if g.usage == nil {
		g.usage = newMemStore(cfg.Limits, cfg.Now)
	}
	g.applied = map[string][]ToolLimits{}
	for i := range tools {
		g.tools[tools[i].Name] = &tools[i]
		g.applied[tools[i].Name] = cfg.Limits.applies(tools[i].Name)
		tools[i].RequiresTrust = tools[i].RequiresTrust || matchesAny(cfg.RequireTrust, tools[i].Name)
	}
	return g
}

// Allowed reports whether a tool may be advertised.
func (g *Guard) Allowed(name string) bool {
	t := g.tool(name)
	ok, _ := g.cfg.Policy.Match(name)
	return t != nil && ok && t.mode() != ApprovalDeny
}

// CallTimeout is the deadline each call runs under.
func (g *Guard) CallTimeout() time.Duration { return g.cfg.CallTimeout }

// CallTimeoutFor is the deadline a call of tool runs under, with the key
// that set it: limits.call_timeout, or atLeast (set by atLeastRule) when
// that is longer, cut to the shortest matching limits.tools timeout.
// atLeast is the tool's own run timeout: the default deadline of every
// call does not cut it, while a limits.tools timeout, which the operator
// set for that tool, does.
func (g *Guard) CallTimeoutFor(tool string, atLeast time.Duration, atLeastRule string) (time.Duration, string) {
	d, rule := g.cfg.CallTimeout, "limits.call_timeout"
	if atLeast > d {
		d, rule = atLeast, atLeastRule
	}
	for _, t := range g.appliedTo(tool) {
		if t.Timeout > 0 && t.Timeout < d {
			d, rule = t.Timeout, "limits.tools."+t.Glob+".timeout"
		}
	}
	return d, rule
}

// Ticket is an admitted call; Finish must be called with its result.
type Ticket struct {
	g      *Guard
	call   Call
	digest string
	start  time.Time
	// pending is true while the call waits for a human's approval, and
	// rule is the rule that asks for it.
	pending bool
	rule    string
	// cost is what the call spends of limits.budget; out is its result's
	// size once it has one (provenance).
	cost, out int64
	// caps are the capabilities the call uses (see used), in capsBuf
	// when they fit.
	caps    []string
	capsBuf [2]string
}

// Admit decides a call and writes the decision's audit line. On denial it
// returns the error to send to the model. A call is also denied when its
// audit line cannot be written: the guard fails closed.
func (g *Guard) Admit(call Call) (*Ticket, *toolerr.Error) {
	start := time.Now()
	digest := ArgsDigest(call.Args)
	call.layers = layersOf(g.cfg.Identities, call)
	call.scan = g.scanArgs(call)
	g.tainted(&call)
	tool, applied := g.tool(call.Tool), g.appliedTo(call.Tool)
	c := Charge{Key: call.key(), Applied: applied, Bytes: call.ArgBytes, Prepaid: call.prepaid}
	if tool != nil {
		c.Cost = cost(tool, applied)
		call.needs, call.needsErr = Needs(tool, call.Args)
		call.needsSet = true
	}
	d, err := g.decideAndCharge(c, call, tool)
	if err != nil {
		e := UnavailableError(err, "the call was not run because its limits could not be checked in the shared state")
		_ = g.record(call, digest, e.Rule, Deny, string(e.Code), start)
		return nil, e
	}
	if d.Outcome == NeedsApproval {
		t, e := g.pending(call, digest, d.Rule, start)
		if t != nil {
			t.cost = c.Cost
			t.caps = t.needed()
		}
		return t, e
	}
	if d.Outcome != Allow {
		_ = g.record(call, digest, d.Rule, Deny, string(d.Err.Code), start)
		return nil, d.Err
	}
	if err := g.record(call, digest, d.Rule, Allow, "", start); err != nil {
		return nil, auditDenial(err)
	}
	t := &Ticket{g: g, call: call, digest: digest, start: start, cost: c.Cost}
	t.caps = t.needed()
	return t, nil
}

// decideAndCharge decides call over its usage and charges it (see
// UsageStore.Admit).
func (g *Guard) decideAndCharge(c Charge, call Call, tool *ToolInfo) (Decision, error) {
	if m, ok := g.usage.(*memStore); ok {
		u, st, now := m.begin(c)
		d := decide(call, tool, g.cfg.Policy, g.cfg.Limits, st, g.validator, false)
		m.end(u, c, d, now)
		return d, nil
	}
	return g.admitShared(c, call, tool)
}

// admitShared is decideAndCharge over a shared store.
func (g *Guard) admitShared(c Charge, call Call, tool *ToolInfo) (Decision, error) {
	return g.usage.Admit(c, func(st State) Decision {
		return decide(call, tool, g.cfg.Policy, g.cfg.Limits, st, g.validator, false)
	})
}

// AdmitAnswer is Admit for the retry of a call that asked for approval
// and now brings the human's answer (protocol 2026-07-28): it was charged
// against the limits when it asked, so it is not charged again, and only
// the limits it has not used up yet (output) are checked. The caller must
// first have verified that the answer is the server's own, unused state
// for this very call, tool, identity and arguments.
func (g *Guard) AdmitAnswer(call Call) (*Ticket, *toolerr.Error) {
	call.prepaid = true
	return g.Admit(call)
}

// AdmitListing is Admit for a resources/list of what tool lists: the
// listing is checked, counted and audited as a call of tool, except that
// it has no arguments to validate. (A listing cannot ask a human: the
// caller declines one that needs approval.)
func (g *Guard) AdmitListing(call Call) (*Ticket, *toolerr.Error) {
	call.listing, call.Args, call.ArgBytes = true, nil, 0
	return g.Admit(call)
}

// Refuse writes the audit line of a call refused before it could be
// decided (its arguments are not a JSON object, so they have no digest)
// and returns e, the error the model receives.
func (g *Guard) Refuse(call Call, e *toolerr.Error) *toolerr.Error {
	_ = g.record(call, "-", e.Rule, Deny, string(e.Code), time.Now())
	return e
}

// Finish filters the result (secrets, invisible characters, injection
// warnings), caps it, counts its bytes against the session and writes the
// audit line with the number of redactions. The returned result is what
// the model receives.
func (t *Ticket) Finish(res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	return t.finish(res, err, "")
}

// finish is Finish, with the audit outcome set to as when it is not empty
// (the code still says how the call ended).
func (t *Ticket) finish(res *mcp.CallToolResult, err error, as Outcome) *mcp.CallToolResult {
	if err != nil {
		res = toolerr.Result(toolerr.As(err))
	}
	filtered, redactions := t.g.filterOutput(res)
	t.g.taintAfter(t.call, redactions)
	res, size := capOutput(filtered, t.g.cfg.MaxOutputBytes)
	res = keepMeta(res, filtered)
	if uerr := t.g.usage.ChargeOutput(t.call.key(), t.g.appliedTo(t.call.Tool), int64(size)); uerr != nil {
		res = toolerr.Result(UnavailableError(uerr,
			"the call ran but its output could not be counted against the shared limits, so its result is withheld"))
	}
	outcome, code := OutcomeCompleted, ""
	if res.IsError {
		outcome, code = OutcomeFailed, string(toolerr.ErrorCode(res))
	}
	if as != "" {
		outcome = as
	}
	t.out = int64(size)
	spent := t.spent()
	res.Meta = outfilter.AddProvenance(res.Meta, t.provenance(spent))
	if aerr := t.g.recordFinished(t, outcome, code, redactions, spent); aerr != nil {
		return toolerr.Result(toolerr.Wrap(aerr, toolerr.AuditWrite, auditHint,
			"the call ran but its audit line could not be written, so its result is withheld").WithRule("audit.write"))
	}
	return res
}

func (g *Guard) record(call Call, digest, rule string, outcome Outcome, code string, start time.Time) error {
	return g.append(entry(call, digest, rule, outcome, code, start))
}

// entry is the audit line of a decision or an ended call.
func entry(call Call, digest, rule string, outcome Outcome, code string, start time.Time) audit.Entry {
	return audit.Entry{
		Session: call.Session, Identity: call.Identity, Trusted: call.Trusted, Tool: call.Tool, ArgsSHA256: digest, Rule: rule,
		Outcome: outcome, Code: code, DurationMS: float64(time.Since(start).Microseconds()) / 1000,
		DroppedArgs: call.Dropped, Approval: call.ApprovalID, DefinitionSHA256: call.Definition, Call: call.CallID,
		ArgFindings: call.scan.findings(),
	}
}

// auditHint is the hint of an audit.write denial.
const auditHint = "The server could not write its audit log (for example, the audit volume is full); " +
	"nothing runs without an audit line. Retry later: the operator must free space on the audit volume or fix the audit file."

// auditDenial is the error of a call refused because its audit line could
// not be written: the guard fails closed.
func auditDenial(err error) *toolerr.Error {
	return toolerr.Wrap(err, toolerr.AuditWrite, auditHint,
		"the call was not run because its audit line could not be written").WithRule("audit.write")
}

func (g *Guard) append(e audit.Entry) error { return g.appendRedacted(e, nil) }

// appendRedacted writes e and shows it, with the redactions by rule of a
// finished call, to the observer.
func (g *Guard) appendRedacted(e audit.Entry, redactedBy map[string]int) error {
	err := g.audit.Append(e)
	if g.obs != nil {
		g.obs.Observe(Event{Entry: e, RedactedBy: redactedBy, Err: err})
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Explain decides call exactly as Admit would, over the identity's usage
// so far, but counts nothing, runs nothing and writes no audit line: it is
// `toolwarden policy explain`.
func (g *Guard) Explain(call Call) Decision {
	call.layers = layersOf(g.cfg.Identities, call)
	call.scan = g.scanArgs(call)
	g.tainted(&call)
	st, err := g.usage.Peek(call.key(), g.appliedTo(call.Tool))
	if err != nil {
		return deny("cluster.redis", UnavailableError(err, "the identity's usage could not be read from the shared state"))
	}
	return Decide(call, g.tool(call.Tool), g.cfg.Policy, g.cfg.Limits, st, g.validator)
}

// EndSession forgets the counters kept under a session ID, those of calls
// without an identity. Counters kept under an identity outlive its
// sessions, so reconnecting does not reset limits.
func (g *Guard) EndSession(id string) {
	g.usage.Forget(id)
	g.taint.forget(id)
}
