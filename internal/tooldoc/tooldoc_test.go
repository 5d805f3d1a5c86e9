package tooldoc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/tools"
)

type in struct {
	Path  string `json:"path" jsonschema:"Where"`
	Limit int    `json:"limit,omitempty" jsonschema:"How many"`
	Alpha string `json:"alpha" jsonschema:"First by name"`
}

type out struct {
	OK bool `json:"ok"`
}

func TestRender(t *testing.T) {
	tool := tools.New("peek_file", "Peek at a file.\n\nWhen to use: never.",
		tools.Annotations{Title: "Peek", ReadOnly: true, Idempotent: true},
		tools.Meta{Toolset: "fs", Capabilities: []string{"fs:read:{path}"}},
		func(context.Context, in) (out, error) { return out{}, nil })
	got, err := Render([]tools.Tool{tool})
	require.NoError(t, err)
	s := string(got)
	require.Contains(t, s, "| [`peek_file`](#peek_file) | fs | yes |  |  |  |  | `fs:read:{path}` |\n")
	require.Contains(t, s, "## peek_file\n\nPeek. Peek at a file.\n\n"+
		"- `alpha` (string, required): First by name\n"+
		"- `path` (string, required): Where\n"+
		"- `limit` (integer): How many\n")
	require.NotContains(t, s, "When to use")
}
