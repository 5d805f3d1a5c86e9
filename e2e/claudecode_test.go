package e2e

import (
	"bytes"
	"encoding/json"
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
	fake "github.com/toolwarden/toolwarden/internal/llmfake/anthropic"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// claudeCodeVersion is the @anthropic-ai/claude-code version
// scripts/clients/setup-claude-code pins. Its engines field asks for Node
// >= 22; the package is a native binary that runs without Node, so the
// Node 20 here is enough (setup-claude-code checks --version).
const claudeCodeVersion = "2.1.331"

// claudeCode names Claude Code in the client table.
const claudeCode = "Claude Code (`@anthropic-ai/claude-code`)"

// claudeRun is one headless Claude Code run (-p) against the scripted
// stand-in for the Messages API (ANTHROPIC_BASE_URL).
type claudeRun struct {
	// serve and decisions: toolwarden's extras and the terminal approver's
	// answers (stdioServer); http, when set, is a toolwarden served over
	// streamable HTTP at this base URL instead, reached with a bearer token.
	serve     serveOpts
	decisions []decision
	http      string
	// allowed are the toolwarden tools the run may call without asking;
	// builtin, Claude Code's own.
	allowed, builtin []string
	// ws and env, when set, are the run's workspace and environment
	// (artifactEnv's, for resources), instead of new ones.
	ws  string
	env []string
}

// claudeResult is what a run left behind.
type claudeResult struct {
	ws       string
	fake     *fake.Server
	stdout   string
	sent     []map[string]any
	answered []map[string]any
	approver approverResult
}

// run starts the fake with turns and runs Claude Code with toolwarden as
// its MCP server (--mcp-config); the run must succeed.
func (r claudeRun) run(t *testing.T, turns ...[]fake.Block) claudeResult {
	t.Helper()
	cli := testenv.Need(t, "TOOLWARDEN_TEST_CLAUDE_CODE")[0] // scripts/test sets it up
	ws, env := r.workspace(t)
	parent := filepath.Dir(ws)
	f := fake.New("mcp__toolwarden__", turns...)
	t.Cleanup(f.Close)

	tw := newStdioServer(t, ws, env, r.serve)
	server := map[string]any{"type": "stdio", "command": tw.command, "args": tw.args}
	if r.http != "" {
		server = map[string]any{"type": "http", "url": r.http + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + httpToken}}
	}
	cfg := filepath.Join(parent, "mcp.json")
	writeSettings(t, cfg, map[string]any{"mcpServers": map[string]any{"toolwarden": server}})
	allowed := append([]string(nil), r.builtin...)
	for _, name := range r.allowed {
		allowed = append(allowed, "mcp__toolwarden__"+name)
	}
	args := []string{"-p", "Read hello.txt, then write out.txt.", "--mcp-config", cfg, "--strict-mcp-config",
		"--allowedTools", strings.Join(allowed, ","), "--output-format", "json"}
	ctx := ctxCLI(t)
	stop := startApprover(ctx, tw, r.decisions...)
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = ws
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+f.URL, "ANTHROPIC_API_KEY=sk-ant-fake", "DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1",
		// By default the CLI declares MCP tools lazily, through its ToolSearch
		// tool; this declares them all up front, as docs/clients.md says.
		"ENABLE_TOOL_SEARCH=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	approver := stop()
	require.NoError(t, err, "claude %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout.String(), stderr.String())
	assert.Empty(t, f.Problems())
	sent, answered := tw.rpc(t)
	return claudeResult{ws: ws, fake: f, stdout: stdout.String(), sent: sent, answered: answered, approver: approver}
}

// workspace is the run's workspace and environment.
func (r claudeRun) workspace(t *testing.T) (string, []string) {
	if r.ws != "" {
		return r.ws, r.env
	}
	return workspace(t)
}

// finalText is the result Claude Code printed (--output-format json).
func (r claudeResult) finalText(t *testing.T) string {
	t.Helper()
	var out struct{ Result string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	return out.Result
}

// TestClaudeCodeClient runs Claude Code headless (-p) with the built
// binary as its stdio MCP server (--mcp-config) and the scripted stand-in
// for the Messages API (ANTHROPIC_BASE_URL): the model reads hello.txt,
// then writes a file, which toolwarden denies (Claude Code cannot elicit
// here), then answers. The test reads what reached the model.
func TestClaudeCodeClient(t *testing.T) {
	res := claudeRun{allowed: []string{"read_file", "write_file"}}.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__read_file", map[string]any{"path": "hello.txt"})},
		[]fake.Block{fake.ToolUse("toolu_2", "mcp__toolwarden__write_file", map[string]any{"path": "out.txt", "content": "x"})},
		[]fake.Block{fake.Text("The file greets you; writing was refused.")})
	ws, f := res.ws, res.fake

	main := f.Main()
	require.Len(t, main, 3, "prompt, then one request per tool result")
	var listed []string
	for _, n := range main[0].ToolNames() {
		if s, ok := strings.CutPrefix(n, "mcp__toolwarden__"); ok {
			listed = append(listed, s)
		}
	}
	sort.Strings(listed)
	assert.Equal(t, servedTools, listed, "every toolwarden tool is declared to the model")

	read, ok := main[1].ToolResult("toolu_1")
	require.True(t, ok, "read_file's result is sent back")
	assert.False(t, read.IsError)
	assert.Contains(t, read.Text, "hello from toolwarden", "read_file's result reaches the model")
	var structured map[string]any
	assert.NoError(t, json.Unmarshal([]byte(read.Text), &structured), "the model gets the structured content as JSON")

	// Claude Code declares elicitation, and headless (-p) it cancels the
	// question: the write is refused as declined, with its code and hint.
	denied, ok := main[2].ToolResult("toolu_2")
	require.True(t, ok, "write_file's result is sent back")
	assert.True(t, denied.IsError, "the error is flagged as one to the model")
	for _, want := range []string{"denied.approval_declined: ", "\nHint: ", "\nRule: approval.declined"} {
		assert.Contains(t, denied.Text, want, "what the model got")
	}
	assert.True(t, declaresElicitation(res.sent), "Claude Code declared elicitation")
	_, err := os.Stat(filepath.Join(ws, "out.txt"))
	assert.True(t, os.IsNotExist(err))

	assert.Equal(t, "The file greets you; writing was refused.", res.finalText(t))
	t.Logf("the denied write reached the model as: %q", denied.Text)
	if !t.Failed() {
		observe(t, claudeCode, claudeCodeVersion, "tools", "✓ all 12, as `mcp__toolwarden__*`")
		observeProtocol(t, claudeCode, claudeCodeVersion, "stdio", negotiated(res.sent, res.answered))
		observe(t, claudeCode, claudeCodeVersion, "structured output", "✓ read_file's result reaches the model, as its structured content's JSON")
		observe(t, claudeCode, claudeCodeVersion, "errors", "✓ code, hint and rule reach the model, `is_error` set")
		observe(t, claudeCode, claudeCodeVersion, "elicitation", "declared; headless (`-p`) cancels the question: `denied.approval_declined` reaches the model")
	}
}

// TestClaudeCodeApprovalAndRunScript: with approval.channel [terminal]
// (Claude Code's own elicitation, cancelled headless, is not used),
// `toolwarden approvals` approves the first write and denies the second,
// and each outcome reaches the model as the tool result; then a Python
// run_script round-trips, and the test records whether Claude Code asked
// for progress and took the notifications.
func TestClaudeCodeApprovalAndRunScript(t *testing.T) {
	testenv.Root(t) // the sandbox of run_script
	res := claudeRun{serve: serveOpts{approvals: true, runScript: true}, decisions: []decision{approve, deny},
		allowed: []string{"write_file", "run_script"}}.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__write_file", approvedWrite)},
		[]fake.Block{fake.ToolUse("toolu_2", "mcp__toolwarden__write_file", deniedWrite)},
		[]fake.Block{fake.ToolUse("toolu_3", "mcp__toolwarden__run_script", pythonScript)},
		[]fake.Block{fake.Text("Wrote one file; the script printed 42.")})
	checkApprover(t, res.approver)
	checkWorkspace(t, res.ws)
	main := res.fake.Main()
	require.Len(t, main, 4, "prompt, then one request per tool result")
	result := func(i int, id string) fake.ToolResult {
		r, ok := main[i].ToolResult(id)
		require.True(t, ok, "%s's result is sent back", id)
		return r
	}
	written := result(1, "toolu_1")
	assert.False(t, written.IsError)
	assert.Contains(t, written.Text, "bytes_written", "the approved write's result reaches the model")
	denied := result(2, "toolu_2")
	assert.True(t, denied.IsError)
	for _, want := range []string{"denied.approval_declined: ", "not this one", "\nRule: approval.declined"} {
		assert.Contains(t, denied.Text, want, "the denial reaches the model")
	}
	script := result(3, "toolu_3")
	assert.False(t, script.IsError)
	checkScriptOutput(t, script.Text)
	assert.Equal(t, "Wrote one file; the script printed 42.", res.finalText(t))

	asked, notes := progressSeen(res.sent, res.answered)
	t.Logf("progress: token sent %v, %d notifications", asked, notes)
	if !t.Failed() {
		observe(t, claudeCode, claudeCodeVersion, approvalColumn, "✓ terminal (`approval.channel: [terminal]`, not `elicit`): the approved write's result and the denial with its reason reach the model")
		observe(t, claudeCode, claudeCodeVersion, "run_script", "✓ Python in the runsc sandbox, stdout reaches the model")
		observe(t, claudeCode, claudeCodeVersion, "progress", progressCell(t, asked, notes, "none printed headless"))
	}
}

// TestClaudeCodeHTTP: toolwarden over streamable HTTP (`"type": "http"`)
// with an Authorization header; read_file's result reaches the model.
func TestClaudeCodeHTTP(t *testing.T) {
	ws, env := workspace(t)
	base := startHTTP(t, ws, env)
	res := claudeRun{http: base, allowed: []string{"read_file"}}.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__read_file", map[string]any{"path": "hello.txt"})},
		[]fake.Block{fake.Text("The file greets you.")})
	main := res.fake.Main()
	require.Len(t, main, 2)
	read, ok := main[1].ToolResult("toolu_1")
	require.True(t, ok)
	assert.False(t, read.IsError)
	assert.Contains(t, read.Text, "hello from toolwarden")
	assert.Equal(t, 1, audittest.Count(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"), "read_file", guard.Allow), "the HTTP server ran it")
	if !t.Failed() {
		observe(t, claudeCode, claudeCodeVersion, "HTTP", "✓ streamable HTTP (`\"type\": \"http\"`), bearer token in `headers`")
	}
}

// TestClaudeCodeApprovalPage: with approval.channel [page], the human
// approves the first write on the approval page and denies the second
// (an HTTP client posting the page's form); each outcome reaches the
// model as the tool result.
func TestClaudeCodeApprovalPage(t *testing.T) {
	res := claudeRun{serve: serveOpts{page: true}, decisions: []decision{approve, {"deny"}},
		allowed: []string{"write_file"}}.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__write_file", approvedWrite)},
		[]fake.Block{fake.ToolUse("toolu_2", "mcp__toolwarden__write_file", deniedWrite)},
		[]fake.Block{fake.Text("Wrote one file.")})
	require.NoError(t, res.approver.err)
	require.Len(t, res.approver.seen, 2, "two calls waited on the page")
	checkWorkspace(t, res.ws)
	main := res.fake.Main()
	require.Len(t, main, 3, "prompt, then one request per tool result")
	written, ok := main[1].ToolResult("toolu_1")
	require.True(t, ok)
	assert.False(t, written.IsError)
	assert.Contains(t, written.Text, "bytes_written", "the approved write's result reaches the model")
	denied, ok := main[2].ToolResult("toolu_2")
	require.True(t, ok)
	assert.True(t, denied.IsError)
	for _, want := range []string{"denied.approval_declined: ", "\nHint: ", "\nRule: approval.declined"} {
		assert.Contains(t, denied.Text, want, "the denial reaches the model")
	}
	if !t.Failed() {
		observe(t, claudeCode, claudeCodeVersion, approvalColumn, "✓ terminal and page (`approval.channel: [terminal]` or `[page]`, not `elicit`): the approved write's result and the denial reach the model")
	}
}

// TestClaudeCodeResources: toolwarden's stored artifacts are resources;
// Claude Code gives the model its ReadMcpResourceTool, and the artifact
// read through it reaches the model.
func TestClaudeCodeResources(t *testing.T) {
	ws, env := artifactEnv(t)
	uri := storeArtifact(t, ws, env)
	r := claudeRun{serve: serveOpts{resources: true}, ws: ws, env: env, builtin: []string{"ReadMcpResourceTool"}}
	res := r.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "ReadMcpResourceTool", map[string]any{"server": "toolwarden", "uri": uri})},
		[]fake.Block{fake.Text("The artifact says hello.")})
	main := res.fake.Main()
	require.Len(t, main, 2)
	assert.Contains(t, main[0].ToolNames(), "ReadMcpResourceTool", "Claude Code declares its resource tool")
	read, ok := main[1].ToolResult("toolu_1")
	require.True(t, ok)
	assert.False(t, read.IsError, read.Text)
	assert.Contains(t, read.Text, "hello from an artifact", "the artifact reaches the model")
	if !t.Failed() {
		observe(t, claudeCode, claudeCodeVersion, "resources", "✓ its `ReadMcpResourceTool` reads a stored artifact; the text reaches the model")
	}
}
