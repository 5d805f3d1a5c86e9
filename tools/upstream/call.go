package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// callIDs numbers the tools/call requests sent past mcp-go's client. The
// IDs are strings ("tw-N"), so they never meet the client's own integer
// IDs on the same transport.
var callIDs atomic.Uint64

// callTool calls tool with args on s. On stdio it sends the request on the
// transport itself and decodes the result once: mcp-go's client decodes
// it twice more (a probe, then the result) and prepares HTTP headers a
// pipe has no use for, which was a fifth of what a guarded call of a
// stdio upstream cost (scripts/bench/upstream.sh). Over HTTP the client,
// which sets the protocol's headers, sends it.
func (s *session) callTool(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if s.proc == nil {
		call := mcp.CallToolRequest{}
		call.Params.Name = tool
		call.Params.Arguments = args
		return s.client.CallTool(ctx, call)
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, Method: string(mcp.MethodToolsCall),
		ID:     mcp.NewRequestId("tw-" + strconv.FormatUint(callIDs.Add(1), 10)),
		Params: callParams{Name: tool, Arguments: args}}
	if err := ctx.Err(); err != nil {
		return nil, transport.NewError(err)
	}
	resp, err := s.rec.SendRequest(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			s.cancel(ctx, req.ID)
		}
		return nil, transport.NewError(err)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, fmt.Errorf("failed to unmarshal response: %w", err)
	}
	return &res, nil
}

// callParams are the params of tools/call, the arguments as validated.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// cancel tells the upstream that the request id is abandoned
// (notifications/cancelled), as mcp-go's client does, off the caller's
// path and best effort.
func (s *session) cancel(ctx context.Context, id mcp.RequestId) {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": ctx.Err().Error()}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.rec.SendNotification(ctx, n)
	}()
}
