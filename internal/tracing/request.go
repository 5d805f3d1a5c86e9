package tracing

import (
	"context"
	"sync"
)

// requests carries each tools/call's JSON-RPC ID from mcp-go's
// before-call hook, which has it, to the call's span, started in the tool
// middleware, which has not; both see the same context, the request's.
// Only while tracing is on.
var requests sync.Map // context.Context -> any

// RememberRequest notes id as the JSON-RPC ID of the request of ctx.
func RememberRequest(ctx context.Context, id any) {
	if Enabled() {
		requests.Store(ctx, id)
	}
}

// RequestID is the JSON-RPC ID noted for the request of ctx, or nil.
func RequestID(ctx context.Context) any {
	if !Enabled() {
		return nil
	}
	id, _ := requests.Load(ctx)
	return id
}

// ForgetRequest drops what RememberRequest noted, once the request is
// answered.
func ForgetRequest(ctx context.Context) { requests.Delete(ctx) }
