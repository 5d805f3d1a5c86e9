package mcpserver

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/structured"
)

// The answer of a POST mcp-go upgraded to an event stream (the handler
// sent notifications first) gets the held result too, and the events
// before it go as they are.
func TestAnswerWriterOnAnEventStream(t *testing.T) {
	out, err := structured.New(map[string]any{"path": "a<b>.txt", "content": "x\u2028\"y\""})
	require.NoError(t, err)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(out.JSON))}, StructuredContent: out}
	slot := &answerSlot{}
	standIn := slot.hold(res)
	require.NotNil(t, standIn)
	require.Nil(t, slot.hold(res), "one result per request")

	rec := httptest.NewRecorder()
	w := &answerWriter{ResponseWriter: rec, slot: slot}
	event := func(msg any) string {
		data, err := json.Marshal(msg)
		require.NoError(t, err)
		return "event: message\ndata: " + string(data) + "\n\n"
	}
	progress := mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/progress",
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"message": `"result":` + mustJSON(t, standIn)}}}}
	for _, e := range []string{event(progress), event(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(3), standIn))} {
		n, err := w.Write([]byte(e))
		require.NoError(t, err)
		require.Equal(t, len(e), n)
	}
	want := event(progress) + event(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(3), structuredForWire(res)))
	require.Equal(t, want, rec.Body.String())
	require.Nil(t, slot.held.Load(), "spliced once")
}

// A result that asks for input goes to mcp-go as it is: mcp-go reads it.
func TestAnswerSlotLeavesInputRequests(t *testing.T) {
	res := &mcp.CallToolResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired},
		MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: mcp.InputRequests{"a": mcp.NewElicitationInputRequest(mcp.ElicitationParams{Message: "ok?"})}}}
	require.Nil(t, (&answerSlot{}).hold(res))
}

func mustJSON(t *testing.T, v any) string {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

// structuredForWire is res as mcp-go gets it without the slot.
func structuredForWire(res *mcp.CallToolResult) *mcp.CallToolResult {
	c := *res
	c.StructuredContent = structured.ForWire(c.StructuredContent)
	return &c
}
