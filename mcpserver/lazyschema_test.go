package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/declared"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// TestCatalogSchemasCompile: every built-in tool's input schema, fixed
// in the binary and compiled only at the tool's first call, compiles.
func TestCatalogSchemasCompile(t *testing.T) {
	cat := catalog(t)
	schemas := map[string]json.RawMessage{}
	var names []string
	for _, tl := range cat {
		schemas[tl.Tool.Name] = tl.Tool.RawInputSchema
		names = append(names, tl.Tool.Name)
	}
	v, err := guard.NewValidator(schemas, nil)
	require.NoError(t, err)
	for _, name := range names {
		require.NoError(t, v.Compile(name), name)
	}
	require.EqualValues(t, len(names), v.Compiled())
}

// TestBuiltinSchemasCompiledAtFirstCall: a default server, as serve,
// tools and policy explain build it, compiles no input schema to start
// or to list its tools; a tool's first call compiles its schema, and
// still refuses arguments the schema does not allow.
func TestBuiltinSchemasCompiledAtFirstCall(t *testing.T) {
	f := newFixture(t)
	b := f.server(t)
	require.Zero(t, b.SchemasCompiled(), "building the server compiles no schema")

	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Contains(t, toolNames(list.Tools), "read_file")
	require.Zero(t, b.SchemasCompiled(), "tools/list compiles no schema")
	d := b.Explain(ctxT(t), "no_such_tool", nil, false)
	require.NotEqual(t, guard.Allow, d.Outcome)
	require.Zero(t, b.SchemasCompiled(), "explaining an unknown tool compiles no schema")

	res := callTool(t, c, "read_file", map[string]any{"path": "hello.txt", "mode": "raw"})
	e := errorOf(t, res)
	require.Equal(t, toolerr.InvalidSchema, e.Code, "the first call is validated: %s", e.Message)
	require.Contains(t, e.Message, "mode")
	require.EqualValues(t, 1, b.SchemasCompiled(), "the first call compiles its tool's schema only")

	res = callTool(t, c, "read_file", map[string]any{"path": "hello.txt"})
	require.False(t, res.IsError, "%+v", res.Content)
	require.Equal(t, toolerr.InvalidSchema, errorOf(t, callTool(t, c, "read_file", map[string]any{"path": 7})).Code)
	require.EqualValues(t, 1, b.SchemasCompiled(), "a schema is compiled once")
}

// TestDeclaredSchemasCompiledAtBuild: the schemas the operator supplies
// are compiled when the server is built, so one that does not compile
// stops the build, naming the tool; config check refuses a hostile
// pattern naming its key.
func TestDeclaredSchemasCompiledAtBuild(t *testing.T) {
	f := newFixture(t)
	f.cfg.Tools = []configs.DeclaredTool{{Name: "web_search", Description: "Search.", Type: configs.ToolHTTP, Method: "GET",
		BaseURL: "https://search.example.com/", Params: []configs.ToolParam{{Name: "q", Type: configs.ParamString, Pattern: "[a-z]+"}}}}
	b := f.server(t)
	require.EqualValues(t, 1, b.SchemasCompiled(), "the declared tool's schema, and no built-in one")

	// An operator's tool whose schema does not compile (a declared
	// pattern is checked by configs.Load before it gets here; an
	// upstream's schema comes from the upstream) stops the guard's build,
	// naming the tool, before any call.
	for name, raw := range map[string]string{
		"bad pattern":  `{"type":"object","properties":{"q":{"type":"string","pattern":"(unclosed"}},"additionalProperties":false}`,
		"remote $ref":  `{"type":"object","properties":{"q":{"$ref":"https://attacker.example/s.json"}}}`,
		"unknown type": `{"type":"objekt"}`,
	} {
		for _, toolset := range []string{declared.Toolset, upstream.Toolset} {
			t.Run(name+" "+toolset, func(t *testing.T) {
				evil := tools.Tool{Tool: mcp.Tool{Name: "evil", RawInputSchema: json.RawMessage(raw)}, Meta: tools.Meta{Toolset: toolset}}
				_, err := mcpserver.NewGuard(f.cfg, append(slices.Clone(b.Tools), evil), audit.Discard{})
				require.ErrorContains(t, err, "tool evil: input schema")
			})
		}
	}

	file := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`tools:
  - name: web_search
    description: Search.
    type: http
    method: GET
    base_url: https://search.example.com/
    params:
      - {name: q, type: string, pattern: "(unclosed"}
`), 0o600))
	_, err := configs.Load(configs.Options{File: file, CheckTool: declared.Check})
	require.ErrorContains(t, err, "tools[0].params[0].pattern")
}
