package tools

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/toolerr"
)

// Preview renders the action of a call read-only, for human approval. An
// error that is a *toolerr.Error means the call would fail: it is refused
// without asking.
type Preview func(ctx context.Context, raw json.RawMessage) (string, error)

// PreviewOf builds a Preview from a typed function: the raw arguments are
// decoded strictly into In, as the handler will decode them.
func PreviewOf[In any](f func(ctx context.Context, in In) (string, error)) Preview {
	return func(ctx context.Context, raw json.RawMessage) (string, error) {
		var in In
		req := mcp.CallToolRequest{}
		req.Params.RawArguments = raw
		if len(raw) == 0 {
			req.Params.RawArguments = json.RawMessage("{}")
		}
		if err := decodeArgs(req, &in); err != nil {
			return "", toolerr.New(toolerr.InvalidSchema, "Call the tool with exactly the parameters in its inputSchema.",
				"arguments do not decode: %v", err)
		}
		return f(ctx, in)
	}
}

// WithPreview returns t with its approval preview set.
func WithPreview(t Tool, p Preview) Tool {
	t.Meta.Preview = p
	return t
}
