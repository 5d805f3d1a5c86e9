package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/openai"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// codexVersion is the @openai/codex version scripts/clients/setup-codex
// pins (its npm package ships a native binary).
const codexVersion = "0.169.0"

// codexCLI names Codex CLI in the client table.
const codexCLI = "Codex CLI (`@openai/codex`)"

// TestCodexClient runs `codex exec` with the built binary as its stdio MCP
// server and a model provider whose base URL is the scripted stand-in for
// the Responses API, both in CODEX_HOME/config.toml. The model reads
// hello.txt, reads a file outside the workspace (toolwarden's error must
// reach it with code and hint), tries write_file (Codex itself refuses a
// tool not marked read-only under approval_policy "never"), then answers.
func TestCodexClient(t *testing.T) {
	res := codexRun{}.run(t,
		[]fake.Item{fake.Call("call_1", codexNS, "read_file", map[string]any{"path": "hello.txt"})},
		[]fake.Item{fake.Call("call_2", codexNS, "read_file", map[string]any{"path": "../outside.txt"})},
		[]fake.Item{fake.Call("call_3", codexNS, "write_file", map[string]any{"path": "out.txt", "content": "x"})},
		[]fake.Item{fake.Text("The file greets you.")})
	f, stdout, stderr := res.fake, res.stdout, res.stderr
	assert.Contains(t, stdout, "The file greets you.")

	main := f.Main()
	require.Len(t, main, 4, "prompt, then one request per tool result; codex stderr: %s", stderr)
	var listed []string
	for _, n := range main[0].ToolNames() {
		if name, ok := strings.CutPrefix(n, codexNS+"__"); ok {
			listed = append(listed, name)
		}
	}
	sort.Strings(listed)
	assert.Equal(t, servedTools, listed, "every toolwarden tool is declared to the model")
	namespace := toolNamespace(main[0].Body, codexNS)
	assert.Contains(t, namespace, "Denied calls return isError results", "the server's instructions describe the namespace")

	read, ok := main[1].Output("call_1")
	require.True(t, ok)
	assert.Contains(t, read, "hello from toolwarden", "read_file's result reaches the model")
	denied, ok := main[2].Output("call_2")
	require.True(t, ok)
	for _, want := range []string{"invalid_argument.path_outside_workspace: ", `\nHint: `, `\nRule: path.inside_workspace`} {
		assert.Contains(t, denied, want, "what the model got")
	}
	assert.NotContains(t, denied, secret)
	refused, ok := main[3].Output("call_3")
	require.True(t, ok)
	assert.Contains(t, refused, "requires approval", "Codex refuses a non-read-only tool itself")
	calls := 0
	for _, m := range res.sent {
		if m["method"] == "tools/call" {
			calls++
		}
	}
	assert.Equal(t, 2, calls, "write_file never reached toolwarden")
	if !t.Failed() {
		observe(t, codexCLI, codexVersion, "tools", "✓ all 12, in a tool namespace `mcp__toolwarden` described by the server's instructions")
		observeProtocol(t, codexCLI, codexVersion, "stdio", negotiated(res.sent, res.answered))
		observe(t, codexCLI, codexVersion, "structured output", "✓ read_file's result reaches the model")
		observe(t, codexCLI, codexVersion, "errors", "✓ code, hint and rule reach the model")
	}
}

// codexNS is the tool namespace Codex declares toolwarden's tools in (one
// per MCP server).
const codexNS = "mcp__toolwarden"

// codexRun is one `codex exec` run against the scripted stand-in for the
// Responses API.
type codexRun struct {
	// serve and decisions: toolwarden's extras and the terminal approver's
	// answers (stdioServer); http, when set, is a toolwarden served over
	// streamable HTTP at this base URL instead, reached with a bearer token.
	serve     serveOpts
	decisions []decision
	http      string
	// server adds lines to toolwarden's [mcp_servers.toolwarden] table.
	server string
	// ws and env, when set, are the run's workspace and environment
	// (artifactEnv's, for resources), instead of new ones; a retry reuses them.
	ws  string
	env []string
}

// codexResult is what a run left behind.
type codexResult struct {
	ws             string
	fake           *fake.Server
	stdout, stderr string
	sent, answered []map[string]any
	approver       approverResult
}

// codexAttempts is how many times run starts Codex before it takes a run
// whose first request declared no toolwarden tool as the answer.
const codexAttempts = 4

// run runs Codex with turns, again when its first model request went out
// before toolwarden's tools were listed: Codex starts its MCP servers
// beside that request, and on a loaded machine (seen twice in about 20
// runs under load 30-40, and twice in a row in one suite run at load 8-10)
// the request has gone, without toolwarden's tools, before the server
// answered tools/list. That is the client's race, not the server's answer:
// the test says so and every assertion applies to the run that counts.
func (r codexRun) run(t *testing.T, turns ...[]fake.Item) codexResult {
	t.Helper()
	cli := testenv.Need(t, "TOOLWARDEN_TEST_CODEX")[0] // scripts/test sets it up
	res := r.runOnce(t, cli, turns)
	for attempt := 2; attempt <= codexAttempts && len(res.fake.Main()) == 0; attempt++ {
		t.Logf("Codex's first request declared no toolwarden tool (requests: %d); attempt %d of %d. stderr: %s",
			len(res.fake.Requests()), attempt, codexAttempts, res.stderr)
		res = r.runOnce(t, cli, turns)
	}
	assert.Empty(t, res.fake.Problems())
	return res
}

// runOnce runs `codex exec` once against a new scripted fake and a new
// workspace, with toolwarden in CODEX_HOME/config.toml.
func (r codexRun) runOnce(t *testing.T, cli string, turns [][]fake.Item) codexResult {
	t.Helper()
	ws, env := r.ws, r.env
	if ws == "" {
		ws, env = workspace(t)
	}
	parent := filepath.Dir(ws)
	f := fake.New("toolwarden", turns...)
	t.Cleanup(f.Close)

	tw := newStdioServer(t, ws, env, r.serve)
	args, _ := json.Marshal(tw.args) // a TOML array of basic strings
	server := fmt.Sprintf("command = %q\nargs = %s\n", tw.command, args)
	if r.http != "" {
		server = fmt.Sprintf("url = %q\nbearer_token_env_var = \"E2E_MCP_BEARER\"\n", r.http+"/mcp")
	}
	home := filepath.Join(parent, "codex-home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	config := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
approval_policy = "never"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_API_KEY"

[mcp_servers.toolwarden]
%sstartup_timeout_sec = 60
%s`, f.URL+"/v1", server, r.server)
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644))

	ctx := ctxCLI(t)
	stop := startApprover(ctx, tw, r.decisions...)
	cmd := exec.CommandContext(ctx, cli, "exec", "--skip-git-repo-check", "Read hello.txt.")
	cmd.Dir = ws
	cmd.Env = append(env, "CODEX_HOME="+home, "FAKE_API_KEY=fake", "NO_COLOR=1", "E2E_MCP_BEARER="+httpToken)
	cmd.Stdin = strings.NewReader("")
	var outBuf, errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &errBuf
	err := cmd.Run()
	approver := stop()
	require.NoError(t, err, "stdout: %s\nstderr: %s", outBuf.String(), errBuf.String())
	sent, answered := tw.rpc(t)
	return codexResult{ws: ws, fake: f, stdout: outBuf.String(), stderr: errBuf.String(), sent: sent, answered: answered, approver: approver}
}

// toolNamespace returns the description of the namespace tool name.
func toolNamespace(body map[string]any, name string) string {
	tools, _ := body["tools"].([]any)
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		if m["type"] == "namespace" && m["name"] == name {
			d, _ := m["description"].(string)
			return d
		}
	}
	return ""
}

// TestCodexApprovalAndRunScript: Codex told to pass toolwarden's calls on
// (default_tools_approval_mode = "approve": under approval_policy "never"
// it would refuse every tool not marked read-only), toolwarden asking on
// the terminal channel. `toolwarden approvals` approves the first write
// and denies the second, and each outcome reaches the model as the
// function output; then a Python run_script round-trips, and the test
// records whether Codex asked for progress and took the notifications.
func TestCodexApprovalAndRunScript(t *testing.T) {
	testenv.Root(t) // the sandbox of run_script
	res := codexRun{serve: serveOpts{approvals: true, runScript: true}, decisions: []decision{approve, deny},
		server: "default_tools_approval_mode = \"approve\"\ntool_timeout_sec = 120\n"}.run(t,
		[]fake.Item{fake.Call("call_1", codexNS, "write_file", approvedWrite)},
		[]fake.Item{fake.Call("call_2", codexNS, "write_file", deniedWrite)},
		[]fake.Item{fake.Call("call_3", codexNS, "run_script", pythonScript)},
		[]fake.Item{fake.Text("Wrote one file; the script printed 42.")})
	checkApprover(t, res.approver)
	checkWorkspace(t, res.ws)
	main := res.fake.Main()
	require.Len(t, main, 4, "prompt, then one request per tool result; codex stderr: %s", res.stderr)
	output := func(i int, id string) string {
		out, ok := main[i].Output(id)
		require.True(t, ok, "%s's output is sent back", id)
		return out
	}
	assert.Contains(t, output(1, "call_1"), "bytes_written", "the approved write's result reaches the model")
	denied := output(2, "call_2")
	for _, want := range []string{"denied.approval_declined: ", "not this one", `\nRule: approval.declined`} {
		assert.Contains(t, denied, want, "the denial reaches the model")
	}
	checkScriptOutput(t, output(3, "call_3"))
	assert.Contains(t, res.stdout, "Wrote one file; the script printed 42.")

	asked, notes := progressSeen(res.sent, res.answered)
	t.Logf("progress: token sent %v, %d notifications", asked, notes)
	if !t.Failed() {
		observe(t, codexCLI, codexVersion, approvalColumn, "✓ terminal, with `default_tools_approval_mode = \"approve\"` (Codex passes the call on): the approved write's result and the denial with its reason reach the model")
		observe(t, codexCLI, codexVersion, "run_script", "✓ Python in the runsc sandbox, stdout reaches the model (with `default_tools_approval_mode`)")
		observe(t, codexCLI, codexVersion, "progress", progressCell(t, asked, notes, "none printed by `codex exec`"))
	}
}

// TestCodexHTTP: toolwarden over streamable HTTP (`url`), the bearer token
// read from the variable `bearer_token_env_var` names; read_file's result
// reaches the model.
func TestCodexHTTP(t *testing.T) {
	ws, env := workspace(t)
	base := startHTTP(t, ws, env)
	res := codexRun{http: base}.run(t,
		[]fake.Item{fake.Call("call_1", codexNS, "read_file", map[string]any{"path": "hello.txt"})},
		[]fake.Item{fake.Text("The file greets you.")})
	main := res.fake.Main()
	require.Len(t, main, 2, "codex stderr: %s", res.stderr)
	read, ok := main[1].Output("call_1")
	require.True(t, ok)
	assert.Contains(t, read, "hello from toolwarden")
	assert.Equal(t, 1, audittest.Count(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"), "read_file", guard.Allow), "the HTTP server ran it")
	if !t.Failed() {
		observe(t, codexCLI, codexVersion, "HTTP", "✓ streamable HTTP (`url`), bearer token from `bearer_token_env_var`")
	}
}

// TestCodexElicitation: Codex declares elicitation; with toolwarden's
// default approval.channel [elicit] and Codex passing the call on, the
// question goes to Codex, which under `codex exec` (approval_policy
// "never") cannot put it to anyone.
func TestCodexElicitation(t *testing.T) {
	res := codexRun{server: "default_tools_approval_mode = \"approve\"\n"}.run(t,
		[]fake.Item{fake.Call("call_1", codexNS, "write_file", map[string]any{"path": "out.txt", "content": "x"})},
		[]fake.Item{fake.Text("Writing was refused.")})
	main := res.fake.Main()
	require.Len(t, main, 2, "codex stderr: %s", res.stderr)
	out, ok := main[1].Output("call_1")
	require.True(t, ok)
	for _, want := range []string{"denied.approval_declined: ", `\nHint: `, `\nRule: approval.declined`} {
		assert.Contains(t, out, want, "the declined question reaches the model")
	}
	assert.True(t, declaresElicitation(res.sent), "Codex declared elicitation")
	_, err := os.Stat(filepath.Join(res.ws, "out.txt"))
	assert.True(t, os.IsNotExist(err))
	if !t.Failed() {
		observe(t, codexCLI, codexVersion, "elicitation", "declared; `codex exec` declines the question: `denied.approval_declined` reaches the model. "+
			"Only with `default_tools_approval_mode = \"approve\"`: else Codex refuses tools not marked read-only before calling them")
	}
}

// TestCodexResources: toolwarden's stored artifacts are resources; Codex
// gives the model its read_mcp_resource tool, and the artifact read
// through it reaches the model.
func TestCodexResources(t *testing.T) {
	ws, env := artifactEnv(t)
	uri := storeArtifact(t, ws, env)
	res := codexRun{serve: serveOpts{resources: true}, ws: ws, env: env}.run(t,
		[]fake.Item{fake.Call("call_1", "", "read_mcp_resource", map[string]any{"server": "toolwarden", "uri": uri})},
		[]fake.Item{fake.Text("The artifact says hello.")})
	main := res.fake.Main()
	require.Len(t, main, 2, "codex stderr: %s", res.stderr)
	assert.Contains(t, main[0].ToolNames(), "read_mcp_resource", "Codex declares its resource tool")
	read, ok := main[1].Output("call_1")
	require.True(t, ok)
	assert.Contains(t, read, "hello from an artifact", "the artifact reaches the model")
	if !t.Failed() {
		observe(t, codexCLI, codexVersion, "resources", "✓ its `read_mcp_resource` tool reads a stored artifact; the text reaches the model")
	}
}
