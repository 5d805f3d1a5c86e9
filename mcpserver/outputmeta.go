package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// labelContents gives each content of a resources/read (text or blob) the
// output filter's report (untrusted label, redactions, warnings) that the
// guarded read call's result carried in its _meta: a resource has no
// result _meta of its own.
func labelContents(contents []mcp.ResourceContents, meta *mcp.Meta) []mcp.ResourceContents {
	if meta == nil || meta.AdditionalFields[outfilter.MetaKey] == nil {
		return contents
	}
	report := meta.AdditionalFields[outfilter.MetaKey]
	for i, c := range contents {
		switch x := c.(type) {
		case mcp.TextResourceContents:
			x.Meta = withReport(x.Meta, report)
			contents[i] = x
		case mcp.BlobResourceContents:
			x.Meta = withReport(x.Meta, report)
			contents[i] = x
		}
	}
	return contents
}

// withReport returns a copy of a content's _meta with the filter's report.
func withReport(meta map[string]any, report any) map[string]any {
	m := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	m[outfilter.MetaKey] = report
	return m
}
