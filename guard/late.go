package guard

import (
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Outcomes of a call that outlived its deadline. The server waits a grace
// period after the deadline: a handler that returns within it ends as
// completed_late (its code says how, empty for success), unless it gave
// up because of the deadline (then failed, limit.timeout); one still
// running is abandoned, and its later end is audited too, so the log never
// says less than what happened.
const (
	OutcomeCompletedLate Outcome = "completed_late"
	OutcomeAbandoned     Outcome = "abandoned"
)

// FinishLate is Finish for a handler that returned after the deadline,
// within the grace period: the model receives what it returned, and the
// audit line says completed_late, with the code when it failed.
func (t *Ticket) FinishLate(res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	return t.finish(res, err, OutcomeCompletedLate)
}

// Abandon is Finish for a handler still running when the grace period
// ended: the model receives e, and the audit line says abandoned with e's
// code. EndAbandoned records how the handler ends.
func (t *Ticket) Abandon(e *toolerr.Error) *mcp.CallToolResult {
	return t.finish(nil, e, OutcomeAbandoned)
}

// EndAbandoned writes the audit line of an abandoned handler that has now
// returned, with outcome and the code of what it returned. Its result
// reaches nobody, so it is neither filtered nor counted.
func (t *Ticket) EndAbandoned(outcome Outcome, code toolerr.Code) error {
	return t.g.recordFinished(t, outcome, string(code), nil, t.spent())
}

// Reject writes the audit line of a call the server refuses before the
// guard decides it, for a reason of the server's own (too many abandoned
// handlers still running), and returns e, the error the model receives.
func (g *Guard) Reject(call Call, e *toolerr.Error) *toolerr.Error {
	_ = g.record(call, ArgsDigest(call.Args), e.Rule, Deny, string(e.Code), time.Now())
	return e
}

// LimitKey is what the call's limits are counted under: its identity, or
// its session when it has none.
func (c Call) LimitKey() string { return c.key() }
