package guard

import "github.com/toolwarden/toolwarden/audit"

// OutcomeStarted marks the audit line a server writes when it starts.
const OutcomeStarted Outcome = "started"

// StartEntry is the audit line of a server start. It holds the digest of
// the tool surface the model is offered, so that a tool whose name,
// description, schema or annotations changed between two starts shows in
// the log, and the build that served (toolwarden --version's text), so a
// line can be traced to the binary that wrote it.
func StartEntry(toolsSHA256, build string) audit.Entry {
	return audit.Entry{Session: "-", Tool: "-", ArgsSHA256: "-", Rule: "start", Outcome: OutcomeStarted, ToolsSHA256: toolsSHA256, Version: build}
}
