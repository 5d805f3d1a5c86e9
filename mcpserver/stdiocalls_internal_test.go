package mcpserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// TestEncodeAnswerSameAsMarshal: the answers stdioCalls writes are the
// bytes json.Marshal makes of them (what mcp-go's stdio server wrote),
// for tool results with every field set, characters encoding/json escapes
// (<, >, &, U+2028), raw structured content with white space, ids of each
// kind, and for the answers it leaves to json.Marshal.
func TestEncodeAnswerSameAsMarshal(t *testing.T) {
	full := &mcp.CallToolResult{
		Result: mcp.Result{Meta: mcp.NewMetaFromMap(map[string]any{"io.toolwarden/output": map[string]any{"untrusted": true}}), ResultType: "complete"},
		MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "state&more",
			InputRequests: mcp.InputRequests{"ask": mcp.NewElicitationInputRequest(mcp.ElicitationParams{Message: "<ok?>"})}},
		Content:           []mcp.Content{mcp.NewTextContent("a <b> & c\u2028d\t\"e\""), mcp.NewImageContent("aGk=", "image/png")},
		StructuredContent: map[string]any{"path": "x<y>.txt", "lines": []any{"1", json.Number("2")}},
		IsError:           true,
	}
	raw := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("x")}, RawStructuredContent: json.RawMessage(`{ "a" : [1, 2],  "b":"<\u00e9>" }`)}
	results := []any{
		full, *full, raw, mcp.NewToolResultText("plain"), mcp.NewToolResultError("failed: <nope>"),
		&mcp.CallToolResult{}, (*mcp.CallToolResult)(nil),
		mcp.InitializeResult{ProtocolVersion: "2025-11-25", ServerInfo: mcp.Implementation{Name: "t&t"}},
		map[string]any{"k": "<v>"},
	}
	ids := []any{1, int64(-7), int64(1) << 62, 2.5, "a<b>", "s\u2028", nil}
	for _, id := range ids {
		for _, r := range results {
			msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), r)
			want, err := json.Marshal(msg)
			require.NoError(t, err)
			got, err := encodeAnswer(msg)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "id %v, result %T", id, r)
		}
		odd := mcp.JSONRPCResponse{JSONRPC: "1<0", ID: mcp.NewRequestId(id), Result: full}
		want, _ := json.Marshal(odd)
		got, err := encodeAnswer(odd)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "another version string")
		errMsg := mcp.NewJSONRPCError(mcp.NewRequestId(id), mcp.INTERNAL_ERROR, "<boom>", nil)
		want, _ = json.Marshal(errMsg)
		got, err = encodeAnswer(errMsg)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

// TestEncodeAnswerEnvelope: encodeAnswer writes JSONRPCResponse's fields
// itself, so a field mcp-go adds to it must be added there too.
func TestEncodeAnswerEnvelope(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[mcp.JSONRPCResponse]().Fields() {
		names = append(names, f.Name+" "+f.Tag.Get("json"))
	}
	require.Equal(t, []string{"JSONRPC jsonrpc", "ID id", "Result result"}, names)
}

// FuzzEncodeAnswer holds encodeAnswer to json.Marshal for any text,
// structured string and id.
func FuzzEncodeAnswer(f *testing.F) {
	f.Add("text", "<&>\u2028", "id", int64(3))
	f.Add("\xff\x00", "", "", int64(0))
	f.Fuzz(func(t *testing.T, text, field, sid string, nid int64) {
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: map[string]any{field: text}}
		for _, id := range []any{sid, nid} {
			msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), res)
			want, err := json.Marshal(msg)
			got, err2 := encodeAnswer(msg)
			if err != nil {
				require.Error(t, err2)
				continue
			}
			require.NoError(t, err2)
			require.Equal(t, string(want), string(got))
		}
	})
}
