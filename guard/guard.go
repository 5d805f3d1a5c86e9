package guard

import (
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/toolerr"
)

// Auditor records decisions. *AuditLog is the real one; tests use fakes to
// prove the guard fails closed when recording fails.
type Auditor interface {
	Append(Entry) error
}

// Config is the guard's configuration.
type Config struct {
	Policy         Policy
	Limits         Limits
	MaxOutputBytes int // per call
	CallTimeout    time.Duration
}

// Guard holds the policy, the tools it knows, session usage and the audit log.
type Guard struct {
	cfg       Config
	tools     map[string]*ToolInfo
	validator *Validator
	audit     Auditor

	mu       sync.Mutex
	sessions map[string]*State
}

// New builds a guard over tools.
func New(cfg Config, tools []ToolInfo, v *Validator, audit Auditor) *Guard {
	g := &Guard{cfg: cfg, tools: map[string]*ToolInfo{}, validator: v, audit: audit, sessions: map[string]*State{}}
	for i := range tools {
		g.tools[tools[i].Name] = &tools[i]
	}
	return g
}

// Allowed reports whether a tool may be advertised.
func (g *Guard) Allowed(name string) bool {
	t, known := g.tools[name]
	ok, _ := g.cfg.Policy.Match(name)
	return known && ok && t.mode() != ApprovalDeny
}

// CallTimeout is the deadline each call runs under.
func (g *Guard) CallTimeout() time.Duration { return g.cfg.CallTimeout }

// Ticket is an admitted call; Finish must be called with its result.
type Ticket struct {
	g      *Guard
	call   Call
	digest string
	start  time.Time
	// pending is true while the call waits for a human's approval.
	pending bool
}

// Admit decides a call and writes the decision's audit line. On denial it
// returns the error to send to the model. A call is also denied when its
// audit line cannot be written: the guard fails closed.
func (g *Guard) Admit(call Call) (*Ticket, *toolerr.Error) {
	start := time.Now()
	digest := ArgsDigest(call.Args)
	g.mu.Lock()
	st := g.session(call.Session)
	d := Decide(call, g.tools[call.Tool], g.cfg.Policy, g.cfg.Limits, *st, g.validator)
	// A call that waits for approval is counted too: asking a human is
	// not free, and a declined call must not be retried without limit.
	if d.Outcome == Allow || d.Outcome == NeedsApproval {
		st.Calls++
	}
	g.mu.Unlock()
	if d.Outcome == NeedsApproval {
		return g.pending(call, digest, d.Rule, start)
	}
	if d.Outcome != Allow {
		_ = g.record(call, digest, d.Rule, Deny, string(d.Err.Code), start)
		return nil, d.Err
	}
	if err := g.record(call, digest, d.Rule, Allow, "", start); err != nil {
		return nil, toolerr.Wrap(err, toolerr.Internal, "The operator must fix the audit log before tools can run.",
			"the call was not run because its audit line could not be written").WithRule("audit.write")
	}
	return &Ticket{g: g, call: call, digest: digest, start: start}, nil
}

// Finish caps the result, counts its bytes against the session and writes
// the audit line. The returned result is what the model receives.
func (t *Ticket) Finish(res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	if err != nil {
		res = toolerr.Result(toolerr.As(err))
	}
	res, size := capOutput(res, t.g.cfg.MaxOutputBytes)
	t.g.mu.Lock()
	t.g.session(t.call.Session).OutputBytes += int64(size)
	t.g.mu.Unlock()
	outcome, code := OutcomeCompleted, ""
	if res.IsError {
		outcome, code = OutcomeFailed, string(toolerr.ErrorCode(res))
	}
	if aerr := t.g.record(t.call, t.digest, "allowed", outcome, code, t.start); aerr != nil {
		return toolerr.Result(toolerr.New(toolerr.Internal, "The operator must fix the audit log before tools can run.",
			"the call ran but its audit line could not be written"))
	}
	return res
}

func (g *Guard) record(call Call, digest, rule string, outcome Outcome, code string, start time.Time) error {
	err := g.audit.Append(Entry{
		Session: call.Session, Tool: call.Tool, ArgsSHA256: digest, Rule: rule,
		Outcome: outcome, Code: code, DurationMS: float64(time.Since(start).Microseconds()) / 1000,
	})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// session returns the state of a session, creating it; g.mu must be held.
func (g *Guard) session(id string) *State {
	st, ok := g.sessions[id]
	if !ok {
		st = &State{}
		g.sessions[id] = st
	}
	return st
}

// EndSession forgets a session's counters.
func (g *Guard) EndSession(id string) {
	g.mu.Lock()
	delete(g.sessions, id)
	g.mu.Unlock()
}
