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

// WithProvenance returns m (a result's meta, as Result made it) with p
// added to its MetaKey report. m is not changed; a meta without the
// report gets one that says untrusted.
func WithProvenance(m *mcp.Meta, p Provenance) *mcp.Meta {
	out := &mcp.Meta{AdditionalFields: map[string]any{}}
	if m != nil {
		out.ProgressToken = m.ProgressToken
		for k, v := range m.AdditionalFields {
			out.AdditionalFields[k] = v
		}
	}
	rep, ok := out.AdditionalFields[MetaKey].(metaReport)
	if !ok {
		rep = metaReport{Untrusted: true}
	}
	out.AdditionalFields[MetaKey] = provenanced{rep, p}
	return out
}
