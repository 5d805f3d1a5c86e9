package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/guard/outfilter"
)

// labelContents gives each text content of a resources/read the output
// filter's report (untrusted label, redactions, warnings) that the guarded
// read call's result carried in its _meta: a resource has no result _meta
// of its own.
func labelContents(contents []mcp.ResourceContents, meta *mcp.Meta) []mcp.ResourceContents {
	if meta == nil || meta.AdditionalFields[outfilter.MetaKey] == nil {
		return contents
	}
	for i, c := range contents {
		if t, ok := c.(mcp.TextResourceContents); ok {
			m := map[string]any{}
			for k, v := range t.Meta {
				m[k] = v
			}
			m[outfilter.MetaKey] = meta.AdditionalFields[outfilter.MetaKey]
			t.Meta = m
			contents[i] = t
		}
	}
	return contents
}
