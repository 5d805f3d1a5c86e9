package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolsnaps"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/declared"
)

// TestOfferedToolsAreTheCatalogs: what a server offers is the catalog's
// definition, bound; only run_script's interpreters may narrow to those
// this machine has.
func TestOfferedToolsAreTheCatalogs(t *testing.T) {
	f := newFixture(t)
	withExec(t, f)
	byName := map[string]mcp.Tool{}
	for _, tl := range mcpserver.Catalog(f.cfg) {
		byName[tl.Tool.Name] = tl.Tool
	}
	b := f.server(t)
	t.Logf("offered %d of %d catalog tools; unavailable: %v", len(b.Tools), len(byName), b.Unavailable)
	for _, tl := range b.Tools {
		want, ok := byName[tl.Tool.Name]
		require.True(t, ok, "%s is offered but not in the catalog", tl.Tool.Name)
		got := tl.Tool
		if got.Name == "run_script" {
			require.Subset(t, enumOf(t, want, "interpreter"), enumOf(t, got, "interpreter"))
			got.RawInputSchema = want.RawInputSchema
		}
		require.Equal(t, jsonOf(t, want), jsonOf(t, got), tl.Tool.Name)
	}
}

// TestUnavailableToolsetIsHidden: the graph tools are in the catalog, but
// without Neo4j they are neither listed nor callable, even when allowed,
// and the reason is reported.
func TestUnavailableToolsetIsHidden(t *testing.T) {
	f := newFixture(t)
	f.cfg.Graph.URI = ""
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, "list_missions")
	require.Contains(t, toolNames(mcpTools(mcpserver.Catalog(f.cfg))), "list_missions")
	b := f.server(t)
	require.Contains(t, b.Unavailable, mcpserver.Unavailable{Toolset: "graph",
		Reason: "not configured: set graph.uri, graph.username and graph.password_env"})
	require.NotContains(t, toolNames(mcpTools(b.Tools)), "list_missions")

	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Contains(t, toolNames(list.Tools), "read_file")
	require.NotContains(t, toolNames(list.Tools), "list_missions")
	req := mcp.CallToolRequest{}
	req.Params.Name = "list_missions"
	_, err = c.CallTool(ctxT(t), req)
	require.ErrorContains(t, err, "list_missions")
}

// reservedNamesFile holds declared.ReservedToolNames, which `go generate
// ./mcpserver` rewrites from the catalog.
var reservedNamesFile = filepath.Join(pkgDir, "..", "tools", "declared", "check.go")

// TestReservedNamesAreTheCatalog: a declared tool may not take a built-in
// name, so tools/declared's list must name every catalog tool, and
// nothing else.
// With UPDATE_TOOLSNAPS=true a list that differs is rewritten; the next run
// checks it.
func TestReservedNamesAreTheCatalog(t *testing.T) {
	cat := catalog(t)
	names := toolNames(mcpTools(cat))
	if toolsnaps.Updating() && !sameNames(names, declared.ReservedToolNames) {
		require.NoError(t, rewriteReservedNames(reservedNamesFile, cat))
		return
	}
	require.ElementsMatch(t, names, declared.ReservedToolNames,
		"declared.ReservedToolNames must be the catalog's names: run go generate ./mcpserver")
}

func sameNames(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// reservedList matches the literal of ReservedToolNames.
var reservedList = regexp.MustCompile(`(?s)var ReservedToolNames = \[\]string\{\n.*?\n\}\n`)

// rewriteReservedNames replaces the literal of ReservedToolNames in file
// with the names of cat, one line per toolset.
func rewriteReservedNames(file string, cat []tools.Tool) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var lit strings.Builder
	lit.WriteString("var ReservedToolNames = []string{\n")
	line := 0
	for i, tl := range cat {
		if i > 0 && (cat[i-1].Meta.Toolset != tl.Meta.Toolset || line > 90) {
			lit.WriteString("\n")
			line = 0
		}
		n, _ := fmt.Fprintf(&lit, "%q, ", tl.Tool.Name)
		line += n
	}
	lit.WriteString("\n}\n")
	if !reservedList.Match(src) {
		return fmt.Errorf("%s has no ReservedToolNames literal", file)
	}
	out, err := format.Source(reservedList.ReplaceAll(src, []byte(lit.String())))
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// enumOf returns the enum of tool's input property prop.
func enumOf(t *testing.T, tool mcp.Tool, prop string) []string {
	t.Helper()
	var schema struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(tool.RawInputSchema, &schema))
	return schema.Properties[prop].Enum
}
