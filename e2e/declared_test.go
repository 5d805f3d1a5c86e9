package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

const declaredKey = "sk-e2e-DECLARED-7d1f0c"

// declaredConfig writes a config beside the workspace declaring a cli grep
// tool and, in tools.d, an http tool against endpoint.
func declaredConfig(t *testing.T, ws, endpoint string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(ws), "conf")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools.d"), 0o755))
	file := filepath.Join(dir, "toolwarden.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
policy:
  allow: [read_file, grep_code, lookup]
tools:
  - name: grep_code
    description: Search one workspace file for a fixed string.
    type: cli
    requires_approval: false
    annotations: {read_only: true}
    command: [grep, -n, -F, --, "{query}", "{file}"]
    params:
      - {name: query, type: string, required: true, max_length: 100}
      - {name: file, type: filepath, required: true}
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools.d", "lookup.yaml"), []byte(`
- name: lookup
  description: Look a word up.
  type: http
  base_url: `+endpoint+`/define
  requires_approval: false
  api_key_env: E2E_LOOKUP_KEY
  params:
    - {name: word, type: string, required: true, pattern: "[a-z]+"}
`), 0o644))
	return file
}

func TestDeclaredToolsBinary(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+declaredKey {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("definition of " + r.URL.Query().Get("word")))
	}))
	defer srv.Close()
	ws, env := workspace(t)
	env = append(env, "E2E_LOOKUP_KEY="+declaredKey)
	file := declaredConfig(t, ws, srv.URL)

	cmd := exec.Command(binary, "tools", "--config", file, "--workspace", ws)
	cmd.Env = env
	out, err := cmd.Output()
	require.NoError(t, err)
	var listed []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	require.NoError(t, json.Unmarshal(out, &listed))
	schemas := map[string]map[string]any{}
	for _, tool := range listed {
		schemas[tool.Name] = tool.InputSchema
	}
	require.Contains(t, schemas, "lookup")
	require.Equal(t, false, schemas["lookup"]["additionalProperties"])
	require.Equal(t, []any{"word"}, schemas["lookup"]["required"])
	require.Equal(t, "^(?:[a-z]+)$", schemas["lookup"]["properties"].(map[string]any)["word"].(map[string]any)["pattern"])

	c, err := client.NewStdioMCPClient(binary, env, "serve", "--config", file, "--workspace", ws)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctxT(t), req)
		require.NoError(t, err)
		return res
	}
	res := call("lookup", map[string]any{"word": "sandbox"})
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "definition of sandbox")
	res = call("lookup", map[string]any{"word": "x&admin=1"})
	require.True(t, res.IsError, "the pattern is enforced")

	if os.Geteuid() == 0 {
		require.Contains(t, schemas, "grep_code", "root can run sandboxes; scripts/test installs the runtimes")
		res = call("grep_code", map[string]any{"query": "from", "file": "hello.txt"})
		require.False(t, res.IsError, "%+v", res.Content)
		require.Contains(t, res.Content[0].(mcp.TextContent).Text, `"stdout":"1:hello from toolwarden\n"`)
		res = call("grep_code", map[string]any{"query": "x", "file": "../outside.txt"})
		require.True(t, res.IsError)
		require.Contains(t, res.Content[0].(mcp.TextContent).Text, "invalid_argument.path_outside_workspace")
	}
	c.Close()

	audit := auditText(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"))
	require.Contains(t, audit, `"tool":"lookup"`)
	require.NotContains(t, audit, declaredKey)
}

// TestDeclaredConfigErrorsBinary: a bad declaration refuses the start with
// file, line, key and reason.
func TestDeclaredConfigErrorsBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	file := declaredConfig(t, ws, "https://dict.example.com")
	bad := filepath.Join(filepath.Dir(file), "tools.d", "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("- name: bad_tool\n  description: d\n  type: cli\n  command: [sh, -c, \"{script}\"]\n"), 0o644))
	cmd := exec.Command(binary, "serve", "--config", file, "--workspace", ws)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), bad+":4: tools[0].command[2]: placeholder {script} names no param")
}

// TestShippedDeclaredExample: configs/examples/declared passes config check
// and declares the grep, go test and web-search tools.
func TestShippedDeclaredExample(t *testing.T) {
	t.Parallel()
	_, env := workspace(t)
	cmd := exec.Command(binary, "config", "check", "--config", "../configs/examples/declared/toolwarden.yaml")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, name := range []string{"grep_code", "go_test", "web_search"} {
		require.Contains(t, string(out), `tools declares `)
		require.Contains(t, string(out), `"`+name+`"`)
	}
	if os.Geteuid() == 0 {
		adv := string(out)[strings.Index(string(out), "advertised_tools:"):strings.Index(string(out), "hidden_tools:")]
		require.Contains(t, adv, "- go_test")
		require.Contains(t, adv, "- web_search")
	}
}

// TestDeclaredCLIWithoutSandbox: with no working sandbox the cli tools are
// unavailable, and config check says why, while the http tools stay.
func TestDeclaredCLIWithoutSandbox(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	file := declaredConfig(t, ws, "https://dict.example.com")
	cmd := exec.Command(binary, "config", "check", "--config", file)
	cmd.Env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap", "TOOLWARDEN_EXEC_BWRAP_PATH=/nonexistent/bwrap")
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "  - toolset: declared_cli\n    reason: 'no working sandbox backend:")
	adv := string(out)[strings.Index(string(out), "advertised_tools:"):strings.Index(string(out), "hidden_tools:")]
	require.Contains(t, adv, "- lookup")
	require.NotContains(t, adv, "grep_code")
}

// TestDeclaredApprovalShowsArgv: approving a declared cli tool shows the
// exact command line that will run, each argument shell-quoted (hostile
// text escaped), not the JSON arguments; a declined call runs nothing.
func TestDeclaredApprovalShowsArgv(t *testing.T) {
	t.Parallel()
	testenv.Root(t) // declared cli tools run only in a sandbox
	ws, env := workspace(t)
	cfg := filepath.Join(t.TempDir(), "tw.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`policy:
  allow: [touch_note]
tools:
  - name: touch_note
    description: Create an empty note file named by the model.
    type: cli
    command: [/usr/bin/touch, --, "{name}"]
    params:
      - {name: name, type: string, required: true, description: The note's name.}
`), 0o644))
	p := &person{action: mcp.ElicitationResponseActionDecline}
	c := stdioClient(t, env, mcp.LATEST_PROTOCOL_VERSION, p, "--config", cfg, "--workspace", ws)
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = "touch_note"
	req.Params.Arguments = map[string]any{"name": "a b$(id)\n'x"}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.True(t, res.IsError, "declined")
	require.Equal(t, 1, p.asked())
	q := p.questions[0]
	require.Contains(t, q, `/usr/bin/touch -- $'a b$(id)\n\'x'`, "the exact argv, quoted: %s", q)
	require.NotContains(t, q, `"name":`, "not the JSON arguments")
	entries, err := os.ReadDir(ws)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing ran: only hello.txt is there")
}
