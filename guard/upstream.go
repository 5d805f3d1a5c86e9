package guard

import "github.com/toolwarden/toolwarden/audit"

// Outcomes of the lines recording an upstream's process: it ended (its
// calls get backend.unavailable until it is restarted), or it serves
// again.
const (
	OutcomeUpstreamDown      Outcome = "upstream_down"
	OutcomeUpstreamRestarted Outcome = "upstream_restarted"
	// OutcomeUpstreamRequestRefused: the upstream sent a request of its
	// own (sampling, elicitation, roots), refused.
	OutcomeUpstreamRequestRefused Outcome = "upstream_request_refused"
	// OutcomeUpstreamMessageRefused: a url upstream sent a message over
	// upstreams[].max_message_bytes, cut unread.
	OutcomeUpstreamMessageRefused Outcome = "upstream_message_refused"
)

// Upstream writes the audit line of a change of an upstream's state:
// tool is "upstream:<name>", rule what ended it (a cap's key, or
// upstream.exited), code the error its calls get meanwhile.
func (g *Guard) Upstream(tool string, outcome Outcome, rule, code string) error {
	return g.append(audit.Entry{Session: "-", Tool: tool, ArgsSHA256: "-", Rule: rule, Outcome: outcome, Code: code})
}
