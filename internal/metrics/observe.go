package metrics

import (
	"strings"

	"github.com/toolwarden/toolwarden/guard"
)

// Observe counts one audit line (it is the guard's Observer): the line's
// outcome, its denial rule, its latency and its redactions.
func (m *Metrics) Observe(ev guard.Event) {
	e := &ev.Entry
	if e.Tool == "-" { // start, rotation and torn-tail lines are no calls
		return
	}
	if ev.Err != nil {
		m.auditErrors.Inc()
		return
	}
	tool, outcome := m.tool(e.Tool), string(e.Outcome)
	m.calls.WithLabelValues(tool, outcome).Inc()
	seconds := e.DurationMS / 1000
	switch e.Outcome {
	case guard.Deny:
		m.denials.WithLabelValues(tool, m.rules.label(e.Rule)).Inc()
		m.decision.WithLabelValues(outcome).Observe(seconds)
	case guard.Allow:
		m.decision.WithLabelValues(outcome).Observe(seconds)
	case guard.NeedsApproval:
		m.decision.WithLabelValues(outcome).Observe(seconds)
		m.approvals.WithLabelValues(outcome, "-").Inc()
	case guard.Approved, guard.Declined:
		m.approvals.WithLabelValues(outcome, channel(e.DecidedBy, e.Rule)).Inc()
	default: // how an admitted call ended
		m.callDuration.WithLabelValues(tool, outcome).Observe(seconds)
		for rule, n := range ev.RedactedBy {
			m.redactions.WithLabelValues(m.redactionRules.label(rule)).Add(float64(n))
		}
	}
}

// channel is the label of the channel an approval was answered on, read
// from the audit line as the server writes it (mcpserver's askHub and
// approver): an approval on the page, terminal or webhook has rule
// "approval.<channel>", one in the client's form "approval.elicit" (or
// "approval.elicit.session"), one remembered for the session
// "approval.session". A refusal's rule is "approval.declined" whatever
// the channel, so its decided_by names it: "page", "terminal uid=1000",
// "webhook" or "webhook: BY", or "client url elicitation: ACTION" (the
// client refused the page's link). "-" when neither names one (a
// timeout, a refusal in the client's form).
func channel(decidedBy, rule string) string {
	switch r := strings.TrimPrefix(rule, "approval."); r {
	case "page", "terminal", "webhook", "elicit", "session":
		return r
	case "elicit.session":
		return "elicit"
	}
	for _, c := range decidedByChannel {
		if rest, ok := strings.CutPrefix(decidedBy, c.prefix); ok && (rest == "" || strings.ContainsAny(rest[:1], " :")) {
			return c.channel
		}
	}
	return "-"
}

// decidedByChannel maps the first words of decided_by to the channel.
var decidedByChannel = []struct{ prefix, channel string }{
	{"page", "page"},
	{"terminal", "terminal"},
	{"webhook", "webhook"},
	{"client url elicitation", "page"},
}

// WaitingForApproval counts a call as waiting for a human until the
// returned function is called.
func (m *Metrics) WaitingForApproval() (done func()) {
	m.approvalsWaiting.Inc()
	return m.approvalsWaiting.Dec
}
