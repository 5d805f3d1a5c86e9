package upstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// TestResourceURIs: an upstream's URI is offered under its own prefix,
// unchanged, and only that upstream's prefix gives it back.
func TestResourceURIs(t *testing.T) {
	uri := ResourceURI("files", "file:///ws/a b.txt?x=1#f")
	require.Equal(t, "upstream://files/file:///ws/a b.txt?x=1#f", uri)
	own, ok := OriginalURI("files", uri)
	require.True(t, ok)
	require.Equal(t, "file:///ws/a b.txt?x=1#f", own)
	for _, bad := range []string{
		"upstream://filesx/file:///a", // another upstream's prefix, longer name
		"upstream://file/s/file:///a", // a shorter name
		"upstream://files/",           // no URI
		"file:///a",                   // not namespaced
		"UPSTREAM://files/file:///a",  // the prefix is exact
	} {
		_, ok := OriginalURI("files", bad)
		require.False(t, ok, bad)
	}
}

// TestPromptItem: a prompt's item is namespaced, read-only, needs
// mcp:get:<upstream>/<prompt>, and validates its arguments as strings,
// required ones required, no others; a hostile name or argument is
// refused naming the rule.
func TestPromptItem(t *testing.T) {
	p := mcp.NewPrompt("review", mcp.WithPromptDescription("Reviews."), mcp.WithArgument("file", mcp.RequiredArgument()), mcp.WithArgument("style"))
	it, err := PromptItem("git", p)
	require.NoError(t, err)
	require.Equal(t, "git__review", it.Tool.Name)
	require.Equal(t, []string{"mcp:get:git/review"}, it.Meta.Capabilities)
	require.Equal(t, Toolset, it.Meta.Toolset)
	require.True(t, ReadOnly(it.Tool), "granted by default as read-only")
	require.False(t, it.Meta.RequiresApproval)
	var schema struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
		Additional bool                      `json:"additionalProperties"`
	}
	require.NoError(t, json.Unmarshal(it.Tool.RawInputSchema, &schema))
	require.Equal(t, []string{"file"}, schema.Required)
	require.Equal(t, "string", schema.Properties["style"]["type"])
	require.False(t, schema.Additional)

	for _, tt := range []struct {
		p    mcp.Prompt
		want string
	}{
		{mcp.NewPrompt("../etc"), "is not [A-Za-z0-9_.-]"},
		{mcp.NewPrompt(strings.Repeat("p", 60)), "over 64"},
		{mcp.NewPrompt("ok", mcp.WithArgument("a b")), `argument name "a b"`},
		{mcp.NewPrompt("ok", mcp.WithArgument("a"), mcp.WithArgument("a")), "listed twice"},
	} {
		_, err := PromptItem("git", tt.p)
		require.ErrorContains(t, err, tt.want, tt.p.Name)
	}
	r := ResourceItem("git")
	require.Equal(t, "git__resources", r.Tool.Name)
	require.Equal(t, []string{"mcp:read:git/resources"}, r.Meta.Capabilities)
}
