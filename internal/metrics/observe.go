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

// channel is the label of the channel an approval was answered on: the
// audit line's decided_by ("socket uid=1000" is "socket"), else its rule
// ("approval.elicit", or "approval.session" for a call the human approved
// for the rest of the session); "-" when neither names one (a timeout).
func channel(decidedBy, rule string) string {
	word, _, _ := strings.Cut(decidedBy, " ")
	if word == "" {
		word = strings.TrimPrefix(rule, "approval.")
	}
	switch word {
	case "elicit", "session", "page", "socket", "webhook":
		return word
	}
	return "-"
}

// WaitingForApproval counts a call as waiting for a human until the
// returned function is called.
func (m *Metrics) WaitingForApproval() (done func()) {
	m.approvalsWaiting.Inc()
	return m.approvalsWaiting.Dec
}
