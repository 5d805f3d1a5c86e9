package mcpserver_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolsnaps"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools"
)

// pkgDir is the package directory, where the snapshots live; newFixture
// changes the working directory.
var pkgDir = func() string { wd, _ := os.Getwd(); return wd }()

// catalog is every built-in tool under the fixture's config with the exec
// tools enabled: the same on every machine, whatever opens.
func catalog(t testing.TB) []tools.Tool {
	t.Helper()
	f := newFixture(t)
	withExec(t, f)
	cat := mcpserver.Catalog(f.cfg)
	t.Logf("the catalog holds %d tools", len(cat))
	return cat
}

// TestToolSnapshots snapshots every catalog tool, and fails on a snapshot
// no catalog tool has.
func TestToolSnapshots(t *testing.T) {
	cat := catalog(t)
	t.Chdir(pkgDir)
	for _, tool := range cat {
		t.Run(tool.Tool.Name, func(t *testing.T) {
			require.NoError(t, toolsnaps.Test(tool.Tool))
		})
	}
	require.NoError(t, toolsnaps.Orphans(toolNames(mcpTools(cat))))
}

var snakeName = regexp.MustCompile(`^[a-z][a-z0-9_]{2,63}$`)

// TestToolInvariants checks what every tool must have, across all tools.
func TestToolInvariants(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range catalog(t) {
		tl := tool.Tool
		t.Run(tl.Name, func(t *testing.T) {
			require.False(t, seen[tl.Name], "duplicate tool name")
			seen[tl.Name] = true
			require.Regexp(t, snakeName, tl.Name, "names are snake_case without dots")
			for _, part := range []string{"When to use", "Parameters", "Returns", "Errors", "Side effects", "Example"} {
				require.Contains(t, tl.Description, part, "description must cover %q", part)
			}
			a := tl.Annotations
			require.NotEmpty(t, a.Title)
			require.NotNil(t, a.ReadOnlyHint)
			require.NotNil(t, a.DestructiveHint)
			require.NotNil(t, a.IdempotentHint)
			require.NotNil(t, a.OpenWorldHint)
			require.False(t, *a.ReadOnlyHint && *a.DestructiveHint, "read-only tools cannot be destructive")
			require.Equal(t, !*a.ReadOnlyHint, tool.Meta.RequiresApproval, "every tool that changes something needs approval")
			require.Equal(t, tool.Meta.RequiresApproval, tool.Meta.Preview != nil, "the human approves a preview of the exact action")
			require.NotEmpty(t, tool.Meta.Toolset)
			require.NotEmpty(t, tool.Meta.Capabilities)

			var in map[string]any
			require.NoError(t, json.Unmarshal(tl.RawInputSchema, &in))
			require.Equal(t, "object", in["type"])
			require.Equal(t, false, in["additionalProperties"], "input schemas must be strict")
			require.Equal(t, "object", tl.OutputSchema.Type)
			require.NotEmpty(t, tl.OutputSchema.Properties)
			props, _ := in["properties"].(map[string]any)
			for name, p := range props {
				desc, _ := p.(map[string]any)["description"].(string)
				require.NotEmpty(t, strings.TrimSpace(desc), "parameter %q needs a description", name)
			}
			for _, arg := range tool.Meta.PathArgs {
				require.Contains(t, props, arg, "declared path argument %q is not in the schema", arg)
			}
			example := tl.Description[strings.LastIndex(tl.Description, "Example: ")+len("Example: "):]
			var ex map[string]any
			require.NoError(t, json.Unmarshal([]byte(example), &ex), "the example must be valid JSON arguments")
			for k := range ex {
				require.Contains(t, props, k, "example uses unknown parameter %q", k)
			}
		})
	}
}
