package guard

import (
	"fmt"

	"github.com/toolwarden/toolwarden/toolerr"
)

// Outcome is what the guard decided.
type Outcome string

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
}

// ToolInfo is what the guard knows of a tool; the wiring layer builds it
// from the tool registry, so guard imports no tool.
type ToolInfo struct {
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

// Limits bound a session.
type Limits struct {
	MaxCalls       int
	MaxOutputBytes int64
}

// State is a session's usage so far.
type State struct {
	Calls       int
	OutputBytes int64
}

// Decision is the guard's verdict, with the rule that decided it.
type Decision struct {
	Outcome Outcome
	Rule    string
	Err     *toolerr.Error
}

// Decide runs the guard's checks, in order, over plain data: known and
// allowlisted, trust, limits, arguments. It is pure, apart from the argument
// validator's compiled schemas.
func Decide(call Call, tool *ToolInfo, policy Policy, limits Limits, state State, v *Validator) Decision {
	if tool == nil {
		return deny("tool.known", toolerr.New(toolerr.DeniedNotAllowed, "Call tools/list to see the tools you may use.",
			"tool %q does not exist", call.Tool))
	}
	if ok, rule := policy.Match(call.Tool); !ok {
		return deny(rule, toolerr.New(toolerr.DeniedNotAllowed,
			"Use one of the tools listed by tools/list; the operator can allow this one in the config's policy.allow.",
			"tool %q is not allowed by the policy (rule %s)", call.Tool, rule))
	}
	if tool.RequiresTrust && !call.Trusted {
		return deny("trust.required", toolerr.New(toolerr.DeniedNotAllowed,
			"This tool runs only from the operator's command line.",
			"tool %q requires the trusted context and cannot be called by a model", call.Tool))
	}
	if d, denied := checkLimits(call, limits, state); denied {
		return d
	}
	if err := v.Validate(call.Tool, call.Args); err != nil {
		return deny(err.Rule, err)
	}
	if d, stop := checkApproval(call, tool); stop {
		return d
	}
	return Decision{Outcome: Allow, Rule: "allowed"}
}

func checkLimits(call Call, limits Limits, state State) (Decision, bool) {
	if state.Calls >= limits.MaxCalls {
		return deny("limits.max_calls_per_session", toolerr.New(toolerr.LimitExceeded,
			"Start a new session, or ask the operator to raise limits.max_calls_per_session.",
			"this session has made %d calls; the limit is %d", state.Calls, limits.MaxCalls)), true
	}
	if state.OutputBytes >= limits.MaxOutputBytes {
		return deny("limits.max_output_bytes_per_session", toolerr.New(toolerr.LimitExceeded,
			"Start a new session, or ask the operator to raise limits.max_output_bytes_per_session.",
			"this session has received %d bytes of tool output; the limit is %d", state.OutputBytes, limits.MaxOutputBytes)), true
	}
	return Decision{}, false
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
