package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type progressKey struct{}

// withProgress remembers the progress token the client sent with req, if
// any, for Progress.
func withProgress(ctx context.Context, req mcp.CallToolRequest) context.Context {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, req.Params.Meta.ProgressToken)
}

// Progress sends a notifications/progress for the current call when the
// client asked for progress; otherwise it does nothing. total is 0 when
// unknown.
func Progress(ctx context.Context, progress, total float64, message string) {
	token := ctx.Value(progressKey{})
	srv := server.ServerFromContext(ctx)
	if token == nil || srv == nil {
		return
	}
	params := map[string]any{"progressToken": token, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	// A client that went away cannot be told; the call itself is cancelled
	// through ctx.
	_ = srv.SendNotificationToClient(ctx, "notifications/progress", params)
}
