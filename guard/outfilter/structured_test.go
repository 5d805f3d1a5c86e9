package outfilter

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
	"github.com/toolwarden/toolwarden/internal/structured"
)

type readOut struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// TestStructuredOutputLeavesFilteredOrAsChecked: a tool's structured.Output
// stays itself only when the filter changed nothing in its JSON (its value
// then encodes to the very bytes scanned); once anything is redacted or
// neutralised, the value the tool made is dropped and the filtered JSON
// leaves instead, in both the structured content and its text copy.
func TestStructuredOutputLeavesFilteredOrAsChecked(t *testing.T) {
	awsKey := fakesecret.All(13)[0].Value
	f, err := New(Options{Redact: true, StripInvisible: true})
	require.NoError(t, err)
	require.NoError(t, f.wait())
	result := func(v readOut) *mcp.CallToolResult {
		o, err := structured.New(v)
		require.NoError(t, err)
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(o.JSON))}, StructuredContent: o}
	}

	clean := result(readOut{Path: "a.txt", Content: "plain text\n"})
	out, _, err := f.Result(clean)
	require.NoError(t, err)
	require.IsType(t, structured.Output{}, out.StructuredContent, "unchanged output is sent as its value")

	hostile := readOut{Path: "b.txt", Content: "key = " + awsKey + "\nsee\u200b\u202ehidden"}
	out, rep, err := f.Result(result(hostile))
	require.NoError(t, err)
	raw, ok := out.StructuredContent.(json.RawMessage)
	require.True(t, ok, "a changed output leaves as the filtered JSON, got %T", out.StructuredContent)
	require.NotContains(t, string(raw), awsKey)
	require.NotContains(t, string(raw), "\u202e")
	require.Equal(t, string(raw), out.Content[0].(mcp.TextContent).Text, "the text copy is the same filtered JSON")
	wire, err := json.Marshal(structured.ForWire(out.StructuredContent))
	require.NoError(t, err)
	require.NotContains(t, string(wire), awsKey, "nothing of the tool's own value reaches the wire")
	require.Positive(t, rep.Redacted())
}

// A result the filter leaves as it was shares its contents with the
// tool's result without letting an append reach them, and a text given
// as a pointer still leaves as a value.
func TestCleanResultContents(t *testing.T) {
	f, err := New(Options{Redact: true, StripInvisible: true})
	require.NoError(t, err)
	require.NoError(t, f.wait())
	o, err := structured.New(readOut{Path: "a.txt", Content: "plain text\n"})
	require.NoError(t, err)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(o.JSON))}, StructuredContent: o}
	out, _, err := f.Result(res)
	require.NoError(t, err)
	require.Equal(t, res.Content, out.Content)
	grown := append(out.Content, mcp.NewTextContent("appended"))
	require.Len(t, res.Content, 1)
	require.Equal(t, "appended", grown[1].(mcp.TextContent).Text)
	require.Equal(t, string(o.JSON), res.Content[0].(mcp.TextContent).Text, "the tool's result is untouched")

	text := mcp.NewTextContent(string(o.JSON))
	res.Content = []mcp.Content{&text}
	out, _, err = f.Result(res)
	require.NoError(t, err)
	require.IsType(t, mcp.TextContent{}, out.Content[0])
}
