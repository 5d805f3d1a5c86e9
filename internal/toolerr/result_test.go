package toolerr_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestResultShape pins down what every client receives: a text that says
// all four fields and is not a JSON object (a client that turns such a
// text into structuredContent would validate it against the tool's output
// schema and fail the call), no structuredContent, and the fields under
// _meta for programs.
func TestResultShape(t *testing.T) {
	e := toolerr.Wrap(errors.New("secret cause"), toolerr.DeniedApprovalUnavailable,
		"Ask the user to approve it in a client that supports elicitation.",
		"write_file needs a human's approval").WithRule("approval.elicit")
	res := toolerr.Result(e)
	require.True(t, res.IsError)
	require.Nil(t, res.StructuredContent)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(mcp.TextContent).Text
	require.Equal(t, "denied.approval_unavailable: write_file needs a human's approval\n"+
		"Hint: Ask the user to approve it in a client that supports elicitation.\nRule: approval.elicit", text)
	var v any
	require.Error(t, json.Unmarshal([]byte(text), &v), "the text must not parse as JSON")

	wire, err := json.Marshal(res)
	require.NoError(t, err)
	require.NotContains(t, string(wire), "secret cause")
	var decoded struct {
		Meta map[string]map[string]string `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(wire, &decoded))
	require.Equal(t, map[string]string{"code": "denied.approval_unavailable", "message": "write_file needs a human's approval",
		"hint": "Ask the user to approve it in a client that supports elicitation.", "rule": "approval.elicit"},
		decoded.Meta[toolerr.MetaKey])
}

// TestFromResult reads the error back in process, after a transport (a
// decoded map), and from the text alone when a client dropped _meta.
func TestFromResult(t *testing.T) {
	e := toolerr.New(toolerr.RateLimited, "Wait, then retry.", "too many calls to %s", toolerr.Quote("a.txt")).WithRule("limits.rate")
	e.RetryAfter = 40
	require.Contains(t, e.Text(), "\nRetry after: 40 s")
	want := toolerr.Error{Code: e.Code, Message: e.Message, Hint: e.Hint, Rule: e.Rule, RetryAfter: 40}

	inProcess := toolerr.Result(e)
	wire, err := json.Marshal(inProcess)
	require.NoError(t, err)
	var transported mcp.CallToolResult
	require.NoError(t, json.Unmarshal(wire, &transported))
	metaless := toolerr.Result(e)
	metaless.Meta = nil

	for name, res := range map[string]*mcp.CallToolResult{"in process": inProcess, "transported": &transported, "without _meta": metaless} {
		got, ok := toolerr.FromResult(res)
		require.True(t, ok, name)
		require.Equal(t, want, got, name)
		require.Equal(t, toolerr.RateLimited, toolerr.ErrorCode(res), name)
	}

	for name, res := range map[string]*mcp.CallToolResult{
		"plain text":      mcp.NewToolResultError("plain text failure"),
		"capitalised":     mcp.NewToolResultError("Error: it broke"),
		"no text content": {IsError: true, Content: []mcp.Content{mcp.NewImageContent("AA==", "image/png")}},
	} {
		_, ok := toolerr.FromResult(res)
		require.False(t, ok, name)
		require.Equal(t, toolerr.Internal, toolerr.ErrorCode(res), name)
	}
	require.Equal(t, toolerr.Code(""), toolerr.ErrorCode(mcp.NewToolResultText("ok")))
}
