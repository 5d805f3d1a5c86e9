package guard

import (
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// Provenance: every result says, beside untrusted and the filter's
// findings, which capabilities its call used and what it spent, and the
// audit line of the ended call records the same, so that an output can be
// traced to the authority that produced it.

// used returns the capabilities the call used: its tool's, with the
// templates filled from its arguments (what the capability check
// checked).
func (t *Ticket) used() []string { return t.caps }

// needed computes used, once, when the ticket is made (a ticket's end
// may be written from another goroutine than its start).
func (t *Ticket) needed() []string {
	tool := t.g.tool(t.call.Tool)
	if tool == nil {
		return []string{}
	}
	needs, err := t.call.capNeeds(tool)
	if err != nil {
		return tool.Capabilities
	}
	out := t.capsBuf[:0]
	for _, n := range needs {
		out = append(out, n.String())
	}
	return out
}

// spent is what the call counted against its identity's limits. A
// listing, or the retry that brings an approval's answer, was counted
// when it asked: it still reports what it cost.
func (t *Ticket) spent() *audit.Spend {
	return &audit.Spend{Calls: 1, BytesIn: t.call.ArgBytes, BytesOut: t.out, Budget: t.cost}
}

// provenance is the call's provenance for its result's meta, with what
// it spent.
func (t *Ticket) provenance(spent *audit.Spend) outfilter.Provenance {
	return outfilter.Provenance{Capabilities: t.used(), Spent: spent, Arguments: t.call.scan.findings()}
}
