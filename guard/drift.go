package guard

import "github.com/toolwarden/toolwarden/audit"

// OutcomeDrift is the outcome of a line recording that an upstream tool's
// definition differs from its pin.
const OutcomeDrift Outcome = "drift"

// Drift writes the audit line of an upstream tool whose listed definition
// (digest listed) differs from its pin (digest pinned, "" for a tool that
// was not pinned), under rule (the upstream_pins mode), with code the
// error its calls now get ("" when they still run).
func (g *Guard) Drift(tool, rule, code, pinned, listed string) error {
	return g.append(audit.Entry{Session: "-", Tool: tool, ArgsSHA256: "-", Rule: rule, Outcome: OutcomeDrift, Code: code,
		DefinitionSHA256: listed, PinnedSHA256: pinned})
}
