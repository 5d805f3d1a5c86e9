package outfilter

import "github.com/mark3labs/mcp-go/mcp"

// Provenance is what the guard adds to a result's MetaKey report besides
// the filter's own findings: the capabilities the call used, what it
// counted against the limits, and what scanning its arguments found.
type Provenance struct {
	Capabilities []string `json:"capabilities,omitempty"`
	Spent        any      `json:"spent,omitempty"`
	Arguments    []string `json:"arguments,omitempty"`
}

// provenanced is the MetaKey value with the call's provenance.
type provenanced struct {
	metaReport
	Provenance
}

// AddProvenance adds p to m's MetaKey report and returns m: m is a
// result's meta as Result (or toolerr.Result) made it, for that result
// alone, so it is changed in place. A nil meta, or one without the
// report, gets one that says untrusted.
func AddProvenance(m *mcp.Meta, p Provenance) *mcp.Meta {
	if m == nil {
		m = &mcp.Meta{}
	}
	if m.AdditionalFields == nil {
		m.AdditionalFields = make(map[string]any, 1)
	}
	rep, ok := m.AdditionalFields[MetaKey].(metaReport)
	if !ok {
		rep = metaReport{Untrusted: true}
	}
	m.AdditionalFields[MetaKey] = provenanced{rep, p}
	return m
}
