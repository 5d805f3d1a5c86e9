package guard

import (
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Outcome is what the guard decided; the audit log records it.
type Outcome = audit.Outcome

// Outcomes of a decision. They are also the audit log's outcome values, with
// OutcomeCompleted and OutcomeFailed for how an allowed call ended.
const (
	Allow            Outcome = "allowed"
	Deny             Outcome = "denied"
	NeedsApproval    Outcome = "needs_approval"
	OutcomeCompleted Outcome = "completed"
	OutcomeFailed    Outcome = "failed"
)

// Call is one tool call as the guard sees it.
type Call struct {
	Tool    string
	Session string
	// Args are the decoded JSON arguments (nil when none were sent).
	Args any
	// Trusted is true only for operator calls, never for an LLM's.
	Trusted bool
	// Identity keys the limits: the authenticated HTTP identity, or the
	// local client. Empty means Session.
	Identity string
	// Claims are the caller's token claims that identities rules match.
	Claims Claims
	// ArgBytes is the size of the arguments' JSON, counted as bytes in.
	ArgBytes int64
	// Dropped names the client control arguments removed from Args
	// before validation (Guard.DropControlArgs); the audit line lists them.
	Dropped []string
	// ApprovalID names the approval request the call belongs to; every
	// audit line of the call carries it. The guard sets it when the call
	// needs approval. A retry that brings the human's answer to that
	// request (protocol 2026-07-28) carries it back: the retry writes no
	// needs_approval line of its own, so the log has one needs_approval
	// line per approval asked, and the lines of its retry name it.
	ApprovalID string
	// Definition is, for an upstream tool, the digest of the definition
	// the call runs under (its pin), for the audit line.
	Definition string
	// CallID links the call's audit lines with the egress lines of its
	// sandbox's connections (audit.Entry.Call); empty on a server without
	// an egress proxy.
	CallID string
	// prepaid is set by AdmitAnswer: the call was charged when it asked
	// for the approval it now brings.
	prepaid bool
	// listing is set by AdmitListing: a resources/list in the tool's name,
	// which has none of its arguments.
	listing bool
	// layers are the identities rules that apply to the call (the guard
	// sets them from Identity and Claims).
	layers []*IdentityLayer
	// scan is what scanning the free-text arguments found (the guard
	// scans before it decides, outside the usage lock; see argscan.go).
	scan *argScan
	// tainted says why the call's session is tainted ("": it is not),
	// and taintMode is policy.taint (see taint.go).
	tainted, taintMode string
	// needs are the capabilities the call needs (Needs), worked out once
	// by Admit for the capability check and the call's provenance;
	// needsSet says they were.
	needs    []capability.Capability
	needsErr *toolerr.Error
	needsSet bool
}

// capNeeds returns the capabilities the call of tool needs: those Admit
// worked out, or Needs'.
func (c Call) capNeeds(tool *ToolInfo) ([]capability.Capability, *toolerr.Error) {
	if c.needsSet {
		return c.needs, c.needsErr
	}
	return Needs(tool, c.Args)
}

// key is what limits are counted under.
func (c Call) key() string {
	if c.Identity != "" {
		return c.Identity
	}
	return c.Session
}

// ToolInfo is what the guard knows of a tool; the wiring layer builds it
// from the tool registry, so guard imports no tool.
type ToolInfo struct {
	// Cost is what one call spends of limits.budget.
	Cost int64

	Name             string
	RequiresTrust    bool
	RequiresApproval bool
	HighRisk         bool
	Capabilities     []string
	// PathArgs names the arguments that hold workspace paths.
	PathArgs []string
	// Approval is the tool's approval mode, resolved at build time from
	// RequiresApproval and the config (ResolveApproval); ApprovalRule
	// names the rule that set it.
	Approval     ApprovalMode
	ApprovalRule string
}

// Decision is the guard's verdict, with the rule that decided it and the
// trace of every check it passed on the way.
type Decision struct {
	Outcome Outcome
	Rule    string
	Err     *toolerr.Error
	// Missing names what the call lacked: a capability, or a limit key.
	Missing string
	Trace   []Step
	// note details a passed check in the trace.
	note string
}

// Step is one check of a decision, for `toolwarden policy explain`.
type Step struct {
	Check   string  `json:"check"`
	Outcome Outcome `json:"outcome"`
	Rule    string  `json:"rule"`
	Detail  string  `json:"detail,omitempty"`
}

// input is what a decision is made over.
type input struct {
	call   Call
	tool   *ToolInfo
	policy Policy
	limits Limits
	state  State
	v      *Validator
	layers []*IdentityLayer
	// approval is the tool's approval mode for this call: its own, made
	// stricter by the identity layers.
	approval ApprovalMode
	// trace is set when the decision's trace is wanted (Decide): the
	// checks then also write the details of the checks they passed.
	trace bool
}

// check is one step of Decide. It returns a decision whose Outcome is
// Allow to pass the call on to the next step (its Rule says why), or the
// decision that ends the call (Deny, NeedsApproval).
type check int

// The guard's steps, in the order docs/architecture.md gives them.
const (
	stepTool check = iota
	stepPolicy
	stepIdentity
	stepTrust
	stepCapabilities
	stepLimits
	stepArguments
	stepApproval
	numChecks
)

// checkNames are the steps' names in a decision's trace.
var checkNames = [numChecks]string{"tool", "policy", "identity", "trust", "capabilities", "limits", "arguments", "approval"}

// run runs the step c. The steps are called directly rather than through
// a table of functions, so that the input stays on Decide's stack.
func (c check) run(in *input) Decision {
	switch c {
	case stepTool:
		return checkKnown(in)
	case stepPolicy:
		return checkPolicy(in)
	case stepIdentity:
		return checkIdentity(in)
	case stepTrust:
		return checkTrust(in)
	case stepCapabilities:
		return checkCapabilities(in)
	case stepLimits:
		return checkLimits(in)
	case stepArguments:
		return checkArguments(in)
	}
	return checkApproval(in)
}

// Decide runs the guard's checks, in order, over plain data: known and
// allowlisted (and by every identities rule that applies), trust,
// capabilities, limits, arguments, approval. It is pure, apart
// from the argument validator's compiled schemas; the returned Trace lists
// every check that ran, with its rule.
func Decide(call Call, tool *ToolInfo, policy Policy, limits Limits, state State, v *Validator) Decision {
	return decide(call, tool, policy, limits, state, v, true)
}

// decide is Decide; without trace, the decision has no Trace (the guard's
// own calls, which only act on the outcome), and every check runs all
// the same.
func decide(call Call, tool *ToolInfo, policy Policy, limits Limits, state State, v *Validator, trace bool) Decision {
	in := newInput(call, tool, policy, limits)
	in.state, in.v, in.trace = state, v, trace
	return in.runThrough(numChecks - 1)
}

// newInput is the checks' input for call of tool: the policy, limits and
// approval mode narrowed by the identities rules that apply to the call.
func newInput(call Call, tool *ToolInfo, policy Policy, limits Limits) input {
	in := input{call: call, tool: tool, policy: policy, limits: limits, layers: call.layers}
	if tool != nil {
		in.policy, in.limits, in.approval = narrow(policy, limits, tool.mode(), call.Tool, call.layers)
	}
	return in
}

// runThrough runs the checks in order, from the first through last, and
// returns the first decision that does not allow, or allowed; with
// in.trace, the decision lists every check that ran.
func (in *input) runThrough(last check) Decision {
	var steps []Step
	if in.trace {
		steps = make([]Step, 0, numChecks)
	}
	for c := stepTool; c <= last; c++ {
		if c == stepIdentity && len(in.layers) == 0 {
			continue // no identities rule applies: nothing to narrow
		}
		d := c.run(in)
		if in.trace {
			steps = append(steps, Step{Check: checkNames[c], Outcome: d.Outcome, Rule: d.Rule, Detail: d.detail()})
		}
		if d.Outcome != Allow {
			d.Trace = steps
			return d
		}
	}
	return Decision{Outcome: Allow, Rule: "allowed", Trace: steps}
}

func pass(rule string) Decision { return Decision{Outcome: Allow, Rule: rule} }

func (d Decision) detail() string {
	if d.Err != nil {
		return d.Err.Message
	}
	return d.note
}

func checkKnown(in *input) Decision {
	if in.tool == nil {
		return deny("tool.known", toolerr.New(toolerr.DeniedNotAllowed, "Call tools/list to see the tools you may use.",
			"tool %q does not exist", in.call.Tool))
	}
	return pass("tool.known")
}

func checkPolicy(in *input) Decision {
	ok, rule := in.policy.Match(in.call.Tool)
	if !ok {
		return deny(rule, toolerr.New(toolerr.DeniedNotAllowed,
			"Use one of the tools listed by tools/list; the operator can allow this one in the config's policy.allow.",
			"tool %q is not allowed by the policy (rule %s)", in.call.Tool, rule))
	}
	return pass(rule)
}

func checkTrust(in *input) Decision {
	switch {
	case !in.tool.RequiresTrust:
		return pass("trust.not_required")
	case in.call.Trusted:
		return pass("trust.trusted_context")
	}
	return deny("trust.required", toolerr.New(toolerr.DeniedNotAllowed,
		"This tool runs only from the operator's command line (toolwarden call --trusted).",
		"tool %q requires the trusted context and cannot be called by a model", in.call.Tool))
}

func checkArguments(in *input) Decision {
	if in.call.listing {
		return pass("args.none_in_a_listing")
	}
	// The scan's refusal comes first: a schema's refusal of an unknown
	// member would quote its name, a secret's too.
	if d, done := in.call.scan.decision(in.call.Tool); done {
		return d
	}
	if err := in.v.Validate(in.call.Tool, in.call.Args); err != nil {
		return deny(err.Rule, err)
	}
	d := pass("args.valid")
	if in.trace {
		notes := []string{}
		if len(in.call.Dropped) > 0 {
			notes = append(notes, droppedNote(in.call.Dropped))
		}
		if n := in.call.scan.note(); n != "" {
			notes = append(notes, n)
		}
		d.note = strings.Join(notes, "; ")
	}
	return d
}

func deny(rule string, err *toolerr.Error) Decision {
	if err.Rule == "" {
		err.Rule = rule
	}
	return Decision{Outcome: Deny, Rule: rule, Err: err}
}

// String renders a decision for logs.
func (d Decision) String() string {
	if d.Err != nil {
		return fmt.Sprintf("%s (%s): %s", d.Outcome, d.Rule, d.Err.Message)
	}
	return fmt.Sprintf("%s (%s)", d.Outcome, d.Rule)
}
