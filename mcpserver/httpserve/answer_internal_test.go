package httpserve

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/structured"
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
	// A client's progress token comes back in every progress event: one
	// shaped as the answer's tail is not taken for it, nor is a message.
	progress := mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/progress",
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{
			"progressToken": map[string]any{"result": standIn}, "message": `"result":` + mustJSON(t, standIn)}}}}
	request := mcp.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(9), Request: mcp.Request{Method: "elicitation/create"},
		Params: map[string]any{"result": standIn}}
	for _, e := range []string{event(progress), event(request), event(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(3), standIn))} {
		n, err := w.Write([]byte(e))
		require.NoError(t, err)
		require.Equal(t, len(e), n)
	}
	want := event(progress) + event(request) + event(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(3), structuredForWire(res)))
	require.Equal(t, want, rec.Body.String())
	require.Nil(t, slot.held.Load(), "spliced once")
}

// Events written while mcp-go decorates the stand-in (a 2026-07-28
// answer: resultType, the server's identity) do not read it: the race
// detector would see it (the progress events of a handler still running).
func TestAnswerWriterLeavesTheStandInToMcpGo(t *testing.T) {
	slot := &answerSlot{}
	standIn := slot.hold(mcp.NewToolResultText("done"))
	w := &answerWriter{ResponseWriter: httptest.NewRecorder(), slot: slot}
	note, err := json.Marshal(mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/progress"}})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			_, _ = w.Write(append(note, '\n'))
		}
	}()
	for range 200 {
		standIn.SetResultType(mcp.ResultTypeComplete)
		standIn.EnsureResultMeta().SetServerInfo(mcp.Implementation{Name: "toolwarden", Version: "test"})
	}
	<-done
}

// The server's identity goes where the result's _meta has none that
// decodes, as mcp-go's decorateResult puts it; the marker never goes.
func TestDecorateLike(t *testing.T) {
	standIn := (&answerSlot{}).hold(mcp.NewToolResultText("x"))
	standIn.SetResultType(mcp.ResultTypeComplete)
	standIn.Meta.SetServerInfo(mcp.Implementation{Name: "toolwarden", Version: "1"})
	res := mcp.NewToolResultText("y")
	res.Meta = mcp.NewMetaFromMap(map[string]any{mcp.MetaKeyServerInfo: nil, "io.toolwarden/output": map[string]any{"untrusted": true}})
	got := decorateLike(res, standIn)
	require.Equal(t, mcp.ResultTypeComplete, got.ResultType)
	require.Equal(t, "toolwarden", got.Meta.ServerInfo().Name)
	require.Contains(t, got.Meta.AdditionalFields, "io.toolwarden/output")
	require.NotContains(t, got.Meta.AdditionalFields, answerMarker)
	require.Nil(t, res.Meta.AdditionalFields[mcp.MetaKeyServerInfo], "the tool's result is left as it was")
	require.Empty(t, res.ResultType)
}

// A result that cannot be encoded is not answered with the stand-in:
// nothing is written, as when mcp-go's own encoding fails.
func TestAnswerWriterUnencodableResult(t *testing.T) {
	slot := &answerSlot{}
	standIn := slot.hold(&mcp.CallToolResult{StructuredContent: structured.Output{Value: 1}}) // no JSON
	rec := httptest.NewRecorder()
	w := &answerWriter{ResponseWriter: rec, slot: slot}
	answer, err := json.Marshal(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), standIn))
	require.NoError(t, err)
	_, err = w.Write(append(answer, '\n'))
	require.Error(t, err)
	require.Empty(t, rec.Body.String())
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
