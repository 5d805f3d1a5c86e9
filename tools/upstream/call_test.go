package upstream

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/structured"
)

// decodeCases are results decodeResult must decode as mcp-go does: text
// only (the one-pass path) and every shape that must take mcp-go's own.
var decodeCases = map[string]string{
	"text":                 `{"content":[{"type":"text","text":"a\u0000b"}]}`,
	"text and annotations": `{"content":[{"type":"text","text":"x","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}],"_meta":{"progressToken":1},"isError":true}`,
	"structured":           `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1,"b":[true,null]}}`,
	"empty content":        `{"content":[]}`,
	"no content":           `{"isError":false}`,
	"image":                `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
	"mixed":                `{"content":[{"type":"text","text":"t"},{"type":"resource","resource":{"uri":"file:///a","text":"r"}}]}`,
	"image without data":   `{"content":[{"type":"image","text":"not an image"}]}`,
	"unknown field":        `{"content":[{"type":"text","text":"t","extra":1}],"other":2}`,
	"result type":          `{"content":[{"type":"text","text":"t"}],"resultType":"complete"}`,
	"modern":               modernResult,
	"input required":       `{"content":[{"type":"text","text":"t"}],"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s"}`,
	"trailing data":        `{"content":[{"type":"text","text":"t"}]} {"content":[]}`,
	"case of keys":         `{"CONTENT":[{"TYPE":"text","Text":"t"}]}`,
	"case of one key":      `{"content":[{"type":"text","Text":"t"}],"structuredContent":{"a":1}}`,
	"duplicate names":      `{"content":[{"type":"text","text":"a","text":"b"}],"structuredContent":{"a":1}}`,
	"duplicate content":    `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"content":[{"type":"text","text":"t"}]}`,
	"invalid utf-8":        "{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}],\"structuredContent\":{\"a\":1}}",
	"escaped names":        `{"\u0063ontent":[{"type":"text","text":"t"}],"structuredContent":{"a":1}}`,
	"null text":            `{"content":[{"type":"text","text":null}],"structuredContent":null}`,
}

// modernResult is a text result as a server speaking 2026-07-28 sends it
// (bareserver's read_file): its identity in _meta, a resultType, the
// structured content beside the text.
const modernResult = `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bareserver","version":"0.1.0"}},"content":[{"type":"text","text":"{\"a\":1}"}],"resultType":"complete","structuredContent":{"a":1}}`

// onePassCases are the decodeCases that decodeResult and answerOf read in one
// pass (textResult): their structured content stays the JSON as sent
// (compacted, in a structured.Output).
var onePassCases = []string{"structured", "modern", "escaped names"}

// TestDecodeResultOnePass: text-only results, also those of 2026-07-28
// with a resultType, are read in one pass, not by mcp-go's decoding
// (which the structured content as a decoded value would show).
func TestDecodeResultOnePass(t *testing.T) {
	for _, name := range onePassCases {
		t.Run(name, func(t *testing.T) {
			got, err := decodeResult(json.RawMessage(decodeCases[name]))
			require.NoError(t, err)
			require.IsType(t, structured.Output{}, got.StructuredContent)
			_, a, ok := answerOf([]byte(`{"jsonrpc":"2.0","id":"tw-1","result":` + decodeCases[name] + `}`))
			require.True(t, ok)
			require.NoError(t, a.err)
			require.IsType(t, structured.Output{}, a.res.StructuredContent)
		})
	}
}

// TestDecodeResultAsMCPGo: every case decodes to what mcp-go's
// CallToolResult decoding gives, or fails where it fails.
func TestDecodeResultAsMCPGo(t *testing.T) {
	for name, raw := range decodeCases {
		t.Run(name, func(t *testing.T) {
			var want mcp.CallToolResult
			wantErr := json.Unmarshal([]byte(raw), &want)
			got, err := decodeResult(json.RawMessage(raw))
			if wantErr != nil {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			if want.StructuredContent != nil {
				// One pass where it reads as mcp-go does, mcp-go's own
				// decoding (a decoded value) everywhere else.
				_, raw := got.StructuredContent.(structured.Output)
				require.Equal(t, slices.Contains(onePassCases, name), raw, "one pass")
				if raw {
					require.Nil(t, got.RawStructuredContent)
				}
				var sc any
				require.NoError(t, json.Unmarshal(mustJSON(t, got.StructuredContent), &sc))
				require.Equal(t, want.StructuredContent, sc)
			}
			want.StructuredContent, want.RawStructuredContent, got.StructuredContent, got.RawStructuredContent = nil, nil, nil, nil
			require.Equal(t, &want, got)
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// BenchmarkDecodeResult decodes a 3 KiB text result with structured
// content, as bareserver's read_file answers over 2026-07-28 (its
// identity in _meta, a resultType), both ways.
func BenchmarkDecodeResult(b *testing.B) {
	text := strings.Repeat("x", 3072)
	body, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": `{"content":"` + text + `"}`}},
		"structuredContent": map[string]any{"content": text}, "resultType": "complete",
		"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "bareserver", "version": "0.1.0"}}})
	b.Run("mcp-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var res mcp.CallToolResult
			if err := json.Unmarshal(body, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeResult", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeResult(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// callParams are the params of tools/call as encoding/json encodes them:
// what callLine must match.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

// TestCallLine: the request callTool writes is one line, and the same
// JSON value as encoding/json gives for the request (any tool name, any
// arguments, pretty-printed ones too, with and without the 2026-07-28
// envelope); arguments that are no JSON are refused, never written.
func TestCallLine(t *testing.T) {
	metas := map[string]map[string]any{"none": nil, "modern": {mcp.MetaKeyProtocolVersion: "2026-07-28",
		mcp.MetaKeyClientInfo: mcp.Implementation{Name: "toolwarden", Version: "<dev>"}}}
	tools := []string{"look", `a"b\c`, "é\u2028<&>"}
	args := []string{``, `{}`, `null`, `{"q":"x"}`, "{\n  \"q\": [1, 2],\n\t\"r\": \"\\n\"\n}", `{"html":"<&>"}`}
	for mname, meta := range metas {
		s := &session{meta: meta}
		for _, tool := range tools {
			for _, a := range args {
				line, err := s.callLine("tw-7", tool, json.RawMessage(a))
				require.NoError(t, err)
				body, ok := bytes.CutSuffix(line, []byte("\n"))
				require.True(t, ok, "a line ends in a newline")
				require.NotContains(t, string(body), "\n", "one line")
				want, err := json.Marshal(transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, Method: string(mcp.MethodToolsCall),
					ID: mcp.NewRequestId("tw-7"), Params: callParams{Name: tool, Arguments: json.RawMessage(a), Meta: meta}})
				require.NoError(t, err)
				require.JSONEq(t, string(want), string(body), "%s %q %q", mname, tool, a)
			}
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":1}}`, `{"a":1},"method":"x"`, "{\"a\":1}\n{\"b\":2}"} {
		_, err := (&session{}).callLine("tw-8", "look", json.RawMessage(bad))
		require.Error(t, err, "%q", bad)
	}
}

// BenchmarkCallLine writes a read_file request with the 2026-07-28
// envelope, as callTool did (encoding/json over the request) and does.
func BenchmarkCallLine(b *testing.B) {
	meta := map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: mcp.ClientCapabilities{},
		mcp.MetaKeyClientInfo: mcp.Implementation{Name: "toolwarden", Version: "dev"}}
	args := json.RawMessage(`{"path":"bench.txt"}`)
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, Method: string(mcp.MethodToolsCall),
				ID: mcp.NewRequestId("tw-1"), Params: callParams{Name: "read_file", Arguments: args, Meta: meta}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("callLine", func(b *testing.B) {
		s := &session{meta: meta}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.callLine("tw-1", "read_file", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// asOutputCases are structured contents as an upstream may send them.
var asOutputCases = []string{
	`{"a":1}`,
	` { "a" : [ 1 , 2.50 , -0e+1 ] ,
	  "b" : { } } `,
	`{"s":"\u0041\/\n\"","t":"\u00e9 é"}`,
	`{"html":"<b>&amp;</b>"}`,
	` { "html" : "a&b" } `,                 // kept as sent, whitespace and all (fuzzing found it compacted in place)
	`{"content": "text", "n": 1}`,          // Python's separators: kept as sent, so that its text copy still matches
	`{"go":"\u003cb\u003e \u0026 \u00e9"}`, // a Go upstream's escapes: an Output
	`{"html":"\u003cb\u003e"}`,
	"{\"sep\":\"a\u2028b\u2029c\"}",
	`[1,"x",null,true]`,
	`"text"`,
	`{"a":1`,
}

// TestAsOutput: structured content becomes a structured.Output whose JSON
// is json.Marshal of its value and of the content as sent (what
// encoding/json wrote before), or stays as sent where json.Marshal would
// escape characters (HTML's, U+2028, U+2029) or it is not JSON.
func TestAsOutput(t *testing.T) {
	for _, raw := range asOutputCases {
		checkAsOutput(t, raw)
	}
}

// TestAsOutputKeepsTheTextCopy: an upstream that sends its structured
// content with spaces (Python's json.dumps) and the same bytes as its
// text copy still has the two equal after decoding, so that the output
// filter knows the text for the copy and scans and counts it once
// (outfilter's textCopy). Compacting the content alone broke that (found
// in review: redactions counted twice).
func TestAsOutputKeepsTheTextCopy(t *testing.T) {
	sc := `{"content": "a secret goes here", "n": 1}`
	text, err := json.Marshal(sc)
	require.NoError(t, err)
	res, err := decodeResult(json.RawMessage(`{"content": [{"type": "text", "text": ` + string(text) + `}], "structuredContent": ` + sc + `}`))
	require.NoError(t, err)
	js, err := structured.JSON(res.StructuredContent)
	require.NoError(t, err)
	require.Equal(t, sc, string(js), "the structured content as sent")
	require.Equal(t, sc, res.Content[0].(mcp.TextContent).Text, "and its text copy, equal")
}

func FuzzAsOutput(f *testing.F) {
	for _, raw := range asOutputCases {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !utf8.ValidString(raw) {
			return // refused before: onePass takes valid UTF-8 only
		}
		checkAsOutput(t, raw)
	})
}

func checkAsOutput(t *testing.T, raw string) {
	t.Helper()
	got := asOutput(json.RawMessage(raw))
	want, err := json.Marshal(json.RawMessage(raw))
	o, ok := got.(structured.Output)
	if !ok {
		require.Equal(t, json.RawMessage(raw), got, "kept as sent")
		formatted, ferr := jsontext.AppendFormat(nil, raw, jsontext.PreserveRawStrings(true))
		require.True(t, err != nil || ferr != nil || !bytes.Equal(want, []byte(raw)) || !bytes.Equal(formatted, []byte(raw)),
			"only content not already as json.Marshal writes it is kept as sent: %q", raw)
		return
	}
	require.NoError(t, err, "%q", raw)
	require.Equal(t, string(want), string(o.JSON), "the JSON encoding/json wrote for it")
	again, err := json.Marshal(o.Value)
	require.NoError(t, err)
	require.Equal(t, string(o.JSON), string(again), "JSON is json.Marshal(Value)")
}
