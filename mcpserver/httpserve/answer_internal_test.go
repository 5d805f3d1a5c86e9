package httpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/rpcerr"
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

// A call whose handler answered with a JSON-RPC error of its own
// (rpcerr.Answer) gets that error in place of mcp-go's answer, the ID
// and framing kept, and on a 2026-07-28 JSON answer the error's status.
func TestAnswerWriterWritesTheHandlersError(t *testing.T) {
	missing := rpcerr.MissingCapability("sampling")
	for _, tc := range []struct {
		name   string
		modern bool
		sse    bool
		status int
	}{
		{"2026-07-28 JSON", true, false, http.StatusBadRequest},
		{"2026-07-28 event stream", true, true, http.StatusOK},
		{"2025-06-18 JSON", false, false, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, rpc := rpcerr.WithSlot(context.Background())
			slot := &answerSlot{}
			standIn := slot.hold(mcp.NewToolResultError("the guard's tool error"))
			require.True(t, rpcerr.Answer(ctx, missing))
			rec := httptest.NewRecorder()
			w := &answerWriter{ResponseWriter: rec, slot: slot, rpc: rpc, modern: tc.modern}
			answer, err := json.Marshal(mcp.NewJSONRPCResultResponse(mcp.NewRequestId("a\"b"), standIn))
			require.NoError(t, err)
			frame := string(answer) + "\n"
			if tc.sse {
				w.Header().Set("Content-Type", "text/event-stream")
				frame = "event: message\ndata: " + string(answer) + "\n\n"
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(http.StatusOK)
			n, err := w.Write([]byte(frame))
			require.NoError(t, err)
			require.Equal(t, len(frame), n)
			require.Equal(t, tc.status, rec.Code)

			body := rec.Body.String()
			if tc.sse {
				require.True(t, strings.HasPrefix(body, "event: message\ndata: ") && strings.HasSuffix(body, "}\n\n"), "%q", body)
				body = strings.TrimPrefix(body, "event: message\ndata: ")
			}
			var got struct {
				ID    any `json:"id"`
				Error struct {
					Code    int            `json:"code"`
					Message string         `json:"message"`
					Data    map[string]any `json:"data"`
				} `json:"error"`
				Result any `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &got), "%q", body)
			assert.Equal(t, "a\"b", got.ID)
			assert.Nil(t, got.Result)
			assert.Equal(t, -32021, got.Error.Code)
			assert.Equal(t, map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}, got.Error.Data)
			assert.Nil(t, slot.held.Load(), "the held result is dropped")
		})
	}
}

// Without the handler's error, the events before the answer and the
// answer itself go as mcp-go writes them; a notification is never taken
// for the answer the error replaces.
func TestAnswerWriterErrorOnlyInTheAnswer(t *testing.T) {
	ctx, rpc := rpcerr.WithSlot(context.Background())
	rec := httptest.NewRecorder()
	w := &answerWriter{ResponseWriter: rec, slot: &answerSlot{}, rpc: rpc, modern: true}
	note := `event: message` + "\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}}` + "\n\n"
	_, err := w.Write([]byte(note))
	require.NoError(t, err)
	require.True(t, rpcerr.Answer(ctx, rpcerr.Invalid("mrtr.request_state", "tampered")))
	_, err = w.Write([]byte(note))
	require.NoError(t, err)
	assert.Equal(t, note+note, rec.Body.String())
}
