package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/mcpserver"
	texec "github.com/toolwarden/toolwarden/tools/exec"
)

// echoArgv prints its arguments as a JSON list, so a test sees exactly
// what the program received, one element per argument.
const echoArgv = "import json, sys; print(json.dumps(sys.argv[1:]))"

var noApproval = false

// echoTool is a cli tool whose program echoes its argv: a string before
// "--" (where it could be a flag), an integer inside --count=, a workspace
// path and a string after "--".
var echoTool = configs.DeclaredTool{
	Name: "echo_args", Description: "Echo the arguments.", Type: configs.ToolCLI,
	Annotations: configs.DeclaredAnnotations{ReadOnly: true},
	// Approval is not what these tests are about; a client here cannot
	// answer an approval request.
	RequiresApproval: &noApproval,
	Command:          []string{"/usr/bin/python3", "-c", echoArgv, "{q}", "--count={n}", "--", "{file}", "{rest}"},
	Params: []configs.ToolParam{
		{Name: "q", Type: configs.ParamString, Required: true},
		{Name: "n", Type: configs.ParamInteger},
		{Name: "file", Type: configs.ParamFilepath, Required: true},
		{Name: "rest", Type: configs.ParamString},
	},
}

// declaredCLIServer serves echo_args in the real sandbox backend,
// failing under scripts/test when it does not work.
func declaredCLIServer(t *testing.T, backend string) *client.Client {
	t.Helper()
	testenv.Root(t)
	f := newFixture(t)
	f.cfg.Tools = []configs.DeclaredTool{echoTool}
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, "echo_args")
	f.cfg.Exec.Backend = backend
	b := f.server(t)
	for _, u := range b.Unavailable {
		if u.Toolset == "declared_cli" {
			testenv.Missing(t, "declared cli tools unavailable: %s", u.Reason)
		}
	}
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	return c
}

// TestDeclaredCLIInjection: each hostile value is either refused with the
// rule it breaks, or reaches the program literally as exactly one argument,
// in gVisor and in bubblewrap.
func TestDeclaredCLIInjection(t *testing.T) {
	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) { injectionTable(t, declaredCLIServer(t, backend), backend) })
	}
}

func injectionTable(t *testing.T, c *client.Client, backend string) {
	literal := []struct {
		name string
		args map[string]any
		argv []string
	}{
		{"shell separator", map[string]any{"q": "x; ls -la", "file": "hello.txt"}, []string{"x; ls -la", "--", "/workspace/hello.txt"}},
		{"command substitution", map[string]any{"q": "$(id)", "file": "hello.txt"}, []string{"$(id)", "--", "/workspace/hello.txt"}},
		{"backticks", map[string]any{"q": "`id`", "file": "hello.txt"}, []string{"`id`", "--", "/workspace/hello.txt"}},
		{"newline", map[string]any{"q": "a\nb", "file": "hello.txt"}, []string{"a\nb", "--", "/workspace/hello.txt"}},
		{"glob and quotes", map[string]any{"q": `* "' \`, "file": "src/main.go"}, []string{`* "' \`, "--", "/workspace/src/main.go"}},
		{"flag after --", map[string]any{"q": "x", "file": "hello.txt", "rest": "--output=/tmp/x"}, []string{"x", "--", "/workspace/hello.txt", "--output=/tmp/x"}},
		{"integer in --count=", map[string]any{"q": "x", "n": 5, "file": "hello.txt"}, []string{"x", "--count=5", "--", "/workspace/hello.txt"}},
		{"dot-dot inside", map[string]any{"q": "x", "file": "src/../hello.txt"}, []string{"x", "--", "/workspace/hello.txt"}},
	}
	for _, tc := range literal {
		t.Run(tc.name, func(t *testing.T) {
			var out texec.RunOut
			structured(t, callTool(t, c, "echo_args", tc.args), &out)
			require.Equal(t, 0, out.ExitCode, out.Stderr)
			var argv []string
			require.NoError(t, json.Unmarshal([]byte(out.Stdout), &argv), out.Stdout)
			require.Equal(t, tc.argv, argv)
			require.Contains(t, out.Sandbox, backend, "the real sandbox ran it")
		})
	}
	refused := []struct {
		name string
		args map[string]any
		code toolerr.Code
		rule string
	}{
		{"flag before --", map[string]any{"q": "--output=/tmp/x", "file": "hello.txt"}, toolerr.FlagNotAllowed, "tools.echo_args.params.q.allow_flag_like"},
		{"short flag", map[string]any{"q": "-rf", "file": "hello.txt"}, toolerr.FlagNotAllowed, "tools.echo_args.params.q.allow_flag_like"},
		{"traversal", map[string]any{"q": "x", "file": "../../etc/passwd"}, toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"absolute path", map[string]any{"q": "x", "file": "/etc/passwd"}, toolerr.PathOutsideWorkspace, "path.relative"},
		{"symlink escape", map[string]any{"q": "x", "file": "escape_link"}, toolerr.PathSymlinkEscape, "path.symlink_inside_workspace"},
		{"missing file", map[string]any{"q": "x", "file": "nope.txt"}, toolerr.NotFound, ""},
		{"NUL byte", map[string]any{"q": "a\x00b", "file": "hello.txt"}, toolerr.InvalidText, "tools.echo_args.params.q.no_nul"},
		{"integer as text", map[string]any{"q": "x", "n": "5; rm -rf /", "file": "hello.txt"}, toolerr.InvalidSchema, "args.schema"},
		{"unknown param", map[string]any{"q": "x", "file": "hello.txt", "cmd": "id"}, toolerr.InvalidSchema, "args.schema"},
		{"missing required", map[string]any{"file": "hello.txt"}, toolerr.InvalidSchema, "args.schema"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			e := errorOf(t, callTool(t, c, "echo_args", tc.args))
			require.Equal(t, tc.code, e.Code, e.Message)
			require.Equal(t, tc.rule, e.Rule)
			require.NotEmpty(t, e.Hint)
		})
	}
}

// TestDeclaredHTTPSecretStaysServerSide calls an http tool through the
// full server: the secret reaches the endpoint, and appears in no result,
// no log line and no audit line, even when the endpoint echoes it.
func TestDeclaredHTTPSecretStaysServerSide(t *testing.T) {
	const key = "sk-live-TOOLWARDEN-TEST-5f3c9a"
	var onWire []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		onWire = append(onWire, r.Header.Get("Authorization"))
		if r.URL.Query().Get("q") == "fail" {
			http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("results for " + r.URL.Query().Get("q") + " with " + r.Header.Get("Authorization")))
	}))
	defer srv.Close()
	t.Setenv("TW_TEST_SEARCH_KEY", key)

	f := newFixture(t)
	f.cfg.Tools = []configs.DeclaredTool{{
		Name: "web_search", Description: "Search the web.", Type: configs.ToolHTTP, Method: "GET",
		BaseURL: srv.URL + "/search", APIKeyEnv: "TW_TEST_SEARCH_KEY", RequiresApproval: &noApproval,
		Params: []configs.ToolParam{{Name: "q", Type: configs.ParamString, Required: true, MaxLength: 100}},
	}}
	f.cfg.Policy.Allow = append(f.cfg.Policy.Allow, "web_search")
	var logs bytes.Buffer
	audit, err := audit.Open(f.auditPath)
	require.NoError(t, err)
	b, err := mcpserver.Build(context.Background(), f.cfg, audit, "test", slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, err)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)

	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.Contains(t, toolNames(list.Tools), "web_search", "allowlisted declared tools are advertised")

	var results []string
	for _, q := range []string{"golang", "fail"} {
		res := callTool(t, c, "web_search", map[string]any{"q": q})
		raw, _ := json.Marshal(res)
		results = append(results, string(raw))
	}
	res := callTool(t, c, "web_search", map[string]any{"q": strings.Repeat("x", 101)})
	require.Equal(t, toolerr.InvalidSchema, errorOf(t, res).Code, "the guard validates the generated schema")
	require.NoError(t, c.Close())
	require.NoError(t, b.Close())
	require.NoError(t, audit.Close())

	require.Equal(t, []string{"Bearer " + key, "Bearer " + key}, onWire, "the secret is on the wire")
	require.Contains(t, results[0], "results for golang with Bearer [REDACTED]")
	require.Contains(t, results[1], string(toolerr.UpstreamStatus))
	auditData, err := os.ReadFile(f.auditPath)
	require.NoError(t, err)
	require.Contains(t, string(auditData), `"tool":"web_search"`)
	for what, text := range map[string]string{"results": strings.Join(results, "\n"), "log": logs.String(), "audit": string(auditData)} {
		require.NotContains(t, text, key, "the secret leaked into the %s", what)
		require.NotContains(t, text, key[8:], "part of the secret leaked into the %s", what)
	}
}

// TestDeclaredHiddenUntilAllowed: a declared tool is built but not
// advertised or callable until policy.allow names it.
func TestDeclaredHiddenUntilAllowed(t *testing.T) {
	f := newFixture(t)
	f.cfg.Tools = []configs.DeclaredTool{{Name: "web_search", Description: "Search.", Type: configs.ToolHTTP, Method: "GET", BaseURL: "https://search.example.com/"}}
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)
	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	require.NotContains(t, toolNames(list.Tools), "web_search")
	require.Equal(t, toolerr.DeniedNotAllowed, errorOf(t, callTool(t, c, "web_search", nil)).Code)
}
