package tools

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// Resources exposes what a toolset holds as MCP resources under one URI
// template. A read is run as a call of one of the toolset's tools (ReadTool,
// with the arguments ReadArgs makes of the URI), so it passes the same
// guard, limits and audit as that call; Contents turns the tool's
// structured result into resource contents.
type Resources struct {
	Template mcp.ResourceTemplate
	// ReadTool reads one resource; resources are offered only when the
	// policy allows it.
	ReadTool string
	ReadArgs func(uri string) map[string]any
	Contents func(uri string, structured json.RawMessage) ([]mcp.ResourceContents, error)
	// ListTool must also be allowed for resources/list to show any.
	ListTool string
	// List returns one page of resources after cursor ("" for the first)
	// and the cursor of the next page ("" at the end).
	List func(ctx context.Context, cursor string) ([]mcp.Resource, string, error)
}
