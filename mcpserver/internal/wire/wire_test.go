package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/structured"
)

// encodeAnswer is json.Marshal(msg), written by WriteAnswer.
func encodeAnswer(msg mcp.JSONRPCMessage) ([]byte, error) {
	var buf bytes.Buffer
	err := WriteAnswer(&buf, msg)
	return buf.Bytes(), err
}

// TestEncodeAnswerSameAsMarshal: the answers the stdio transport writes are the
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
	out, err := structured.New(map[string]any{"path": "a<b>&\u2028.txt", "content": "x\n\"\xff\x00", "n": 1.5})
	require.NoError(t, err)
	asTool := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(out.JSON))}, StructuredContent: out}
	withMeta := *asTool
	withMeta.Meta = mcp.NewMetaFromMap(map[string]any{"io.toolwarden/output": map[string]any{"untrusted": true}})
	odd := &mcp.CallToolResult{Content: []mcp.Content{nil, &mcp.TextContent{Type: "text", Text: "p"}}, IsError: true}
	noJSON := &mcp.CallToolResult{StructuredContent: structured.Output{Value: 1}} // an error, as json.Marshal's
	results := []any{
		full, *full, raw, asTool, &withMeta, odd, noJSON, mcp.NewToolResultText("plain"), mcp.NewToolResultError("failed: <nope>"),
		&mcp.CallToolResult{}, (*mcp.CallToolResult)(nil),
		mcp.InitializeResult{ProtocolVersion: "2025-11-25", ServerInfo: mcp.Implementation{Name: "t&t"}},
		map[string]any{"k": "<v>"},
	}
	ids := []any{1, int64(-7), int64(1) << 62, 2.5, "a<b>", "s\u2028", nil}
	for _, id := range ids {
		for _, r := range results {
			msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), r)
			want, err := json.Marshal(msg)
			got, err2 := encodeAnswer(msg)
			if err != nil {
				require.Error(t, err2, "id %v, result %+v", id, r)
				continue
			}
			require.NoError(t, err2)
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

// TestToolResultFields: WriteToolResult writes CallToolResult's members
// itself (those its MarshalJSON writes), so a field mcp-go adds must be
// added there too.
func TestToolResultFields(t *testing.T) {
	var names []string
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for f := range rt.Fields() {
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			names = append(names, f.Name)
		}
	}
	walk(reflect.TypeFor[mcp.CallToolResult]())
	require.Equal(t, []string{"Meta", "ResultType", "InputRequests", "RequestState", "Content",
		"StructuredContent", "RawStructuredContent", "IsError"}, names)
}

// FuzzEncodeAnswer holds encodeAnswer to json.Marshal for any text,
// structured string and id, with the structured content as a map and as
// the structured.Output a tool makes.
func FuzzEncodeAnswer(f *testing.F) {
	f.Add("text", "<&>\u2028", "id", int64(3))
	f.Add("\xff\x00", "", "", int64(0))
	f.Fuzz(func(t *testing.T, text, field, sid string, nid int64) {
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: map[string]any{field: text}}
		out, err := structured.New(map[string]any{field: text})
		require.NoError(t, err)
		asTool := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(out.JSON))}, StructuredContent: out}
		for i, id := range []any{sid, nid} {
			msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), []*mcp.CallToolResult{res, asTool}[i])
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
