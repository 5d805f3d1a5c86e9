// Package tools defines what a toolwarden tool is: an mcp.Tool whose input
// and output schemas are generated from Go structs, its handler, and the
// metadata the guard needs. The tool implementations live in one
// sub-package per domain (tools/fs, ...).
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/internal/structured"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Meta is the guard metadata of a tool.
type Meta struct {
	// Toolset groups tools by domain: "fs", "exec", "graph", ...
	Toolset string
	// Cost is what one call spends of limits.budget (config can override).
	Cost int64
	// Capabilities the tool needs, as resource:verb:scope.
	Capabilities     []string
	RequiresApproval bool
	RequiresTrust    bool
	HighRisk         bool
	// Preview, when set, describes in plain text, action first, exactly
	// what a call with these (validated) arguments would do, without doing
	// it: the human approves that text. Without it the approval shows the
	// tool name and the arguments.
	Preview Preview
	// PathArgs names the arguments holding workspace-relative paths.
	PathArgs []string
	// Timeout and MaxOutputBytes, when set, are the tool's own limits
	// (declared tools); the tool enforces them itself.
	Timeout        time.Duration
	MaxOutputBytes int
	// RunTimeout, when set, is how long a call with these (validated)
	// arguments may run by the tool's own limit, such as a sandbox's
	// wall-clock timeout, with the config key that sets it. The server's
	// call deadline is never shorter than that plus a margin, so the
	// tool's own limit ends a long run and what it printed comes back.
	RunTimeout func(args map[string]any) (time.Duration, string)
}

// Annotations are the four MCP hints, all of which every tool sets
// explicitly (mcp-go defaults an unset tool to destructive and open-world).
type Annotations struct {
	Title       string
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Tool is one tool: what the model sees, what runs, what the guard checks.
type Tool struct {
	Tool    mcp.Tool
	Handler server.ToolHandlerFunc
	Meta    Meta
}

// Handler is a typed tool implementation. Errors that are *toolerr.Error
// reach the model as such; any other error is reported as internal.
type Handler[In, Out any] func(ctx context.Context, in In) (Out, error)

// New builds a Tool whose schemas come from In and Out.
func New[In, Out any](name, description string, ann Annotations, meta Meta, h Handler[In, Out]) Tool {
	t := mcp.NewTool(name,
		mcp.WithDescription(description),
		mcp.WithInputSchema[In](),
		mcp.WithOutputSchema[Out](),
		mcp.WithTitleAnnotation(ann.Title),
		mcp.WithReadOnlyHintAnnotation(ann.ReadOnly),
		mcp.WithDestructiveHintAnnotation(ann.Destructive),
		mcp.WithIdempotentHintAnnotation(ann.Idempotent),
		mcp.WithOpenWorldHintAnnotation(ann.OpenWorld),
	)
	return Tool{Tool: t, Handler: handle(h), Meta: meta}
}

func handle[In, Out any](h Handler[In, Out]) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := decodeArgs(req, &in); err != nil {
			return toolerr.Result(toolerr.New(toolerr.InvalidSchema,
				"Call the tool with exactly the parameters in its inputSchema.",
				"arguments do not decode: %v", err)), nil
		}
		out, err := h(withProgress(ctx, req), in)
		if err != nil {
			return toolerr.Result(toolerr.As(err)), nil
		}
		return structuredResult(out)
	}
}

// structuredResult returns out as structured content and, as the MCP spec
// asks for compatibility, as its JSON text. Both share one encoding (see
// package structured).
func structuredResult(out any) (*mcp.CallToolResult, error) {
	o, err := structured.New(out)
	if err != nil {
		return nil, err
	}
	r := &resultWithText{}
	r.text[0] = mcp.NewTextContent(string(o.JSON))
	r.res.Content, r.res.StructuredContent = r.text[:], o
	return &r.res, nil
}

// resultWithText is a result with room for its one content, allocated
// together: every successful call makes one.
type resultWithText struct {
	res  mcp.CallToolResult
	text [1]mcp.Content
}

// decodeArgs decodes the call's arguments strictly (unknown fields are an
// error), whatever form the transport delivered them in.
func decodeArgs(req mcp.CallToolRequest, dst any) error {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return err
		}
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = []byte("{}")
	}
	return decodeStrict(raw, dst)
}
