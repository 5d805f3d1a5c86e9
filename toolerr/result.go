package toolerr

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// Result turns e into the tool result the model receives: isError set and
// one text content holding the JSON object {code, message, hint, rule}.
func Result(e *Error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(e.JSON())},
		IsError: true,
	}
}

// ErrorCode reads the code back from a result built by Result; it returns
// Internal for an error result of another shape and "" for a success.
func ErrorCode(res *mcp.CallToolResult) Code {
	if res == nil || !res.IsError {
		return ""
	}
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			var e Error
			if json.Unmarshal([]byte(tc.Text), &e) == nil && e.Code != "" {
				return e.Code
			}
		}
	}
	return Internal
}
