package declared

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolsnaps"
	"github.com/toolwarden/toolwarden/tools"
)

// exampleTools builds the tools of the shipped example configuration.
func exampleTools(t *testing.T) []tools.Tool {
	t.Helper()
	t.Setenv("TOOLWARDEN_CONFIG", "")
	l, err := configs.Load(configs.Options{File: "../../configs/examples/declared/toolwarden.yaml", CheckTool: Check})
	require.NoError(t, err)
	var out []tools.Tool
	for _, d := range l.Config.Tools {
		if d.Type == configs.ToolCLI {
			out = append(out, CLI{}.Tool(d))
		} else {
			out = append(out, HTTP{Getenv: func(string) string { return "" }}.Tool(d))
		}
	}
	require.Len(t, out, 3)
	return out
}

// TestExampleToolSnapshots snapshots what the model sees of the shipped
// examples, as the built-in tools are snapshotted.
func TestExampleToolSnapshots(t *testing.T) {
	var names []string
	for _, tool := range exampleTools(t) {
		require.NoError(t, toolsnaps.Test(tool.Tool), tool.Tool.Name)
		names = append(names, tool.Tool.Name)
	}
	require.NoError(t, toolsnaps.Orphans(names))
}

// TestExampleToolInvariants: declared tools meet the rules every built-in
// tool meets (mcpserver's TestToolInvariants).
func TestExampleToolInvariants(t *testing.T) {
	for _, tool := range exampleTools(t) {
		tl := tool.Tool
		t.Run(tl.Name, func(t *testing.T) {
			for _, part := range []string{"When to use", "Parameters", "Returns", "Errors", "Side effects", "Example"} {
				require.Contains(t, tl.Description, part)
			}
			a := tl.Annotations
			require.NotEmpty(t, a.Title)
			for _, hint := range []*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
				require.NotNil(t, hint)
			}
			require.Equal(t, "declared", tool.Meta.Toolset)
			require.NotEmpty(t, tool.Meta.Capabilities)
			var in map[string]any
			require.NoError(t, json.Unmarshal(tl.RawInputSchema, &in))
			require.Equal(t, false, in["additionalProperties"])
			props := in["properties"].(map[string]any)
			for _, arg := range tool.Meta.PathArgs {
				require.Contains(t, props, arg)
			}
			require.Equal(t, "object", tl.OutputSchema.Type)
			var ex map[string]any
			require.NoError(t, json.Unmarshal([]byte(tl.Description[strings.LastIndex(tl.Description, "Example: ")+9:]), &ex))
			for k := range ex {
				require.Contains(t, props, k)
			}
		})
	}
}
