package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	fake "github.com/toolwarden/toolwarden/internal/llmfake/anthropic"
	"github.com/toolwarden/toolwarden/internal/llmfake/gemini"
	openai "github.com/toolwarden/toolwarden/internal/llmfake/openai"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/sandbox"
)

// The client matrix with an upstream: real clients see and call a real
// upstream server's tools (server-filesystem, sandboxed) through
// toolwarden, with an approval.

// tsUpstreamSummary is what scripts/clients/tsclient/upstream.cjs prints.
type tsUpstreamSummary struct {
	SDK   string   `json:"sdk"`
	Tools []string `json:"tools"`
	Read  struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"read"`
	Write struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"write"`
	Questions []string `json:"questions"`
}

// TestTypeScriptSDKUpstream: the official TypeScript SDK, as a client that
// answers elicitation, sees server-filesystem's tools through toolwarden
// (sandboxed under bubblewrap), reads a workspace file without being
// asked (read-only), and writes one after toolwarden asked it once, the
// question naming the tool and its exact arguments; the write reaches the
// workspace and the audit has the approval.
func TestTypeScriptSDKUpstream(t *testing.T) {
	prefix := testenv.Need(t, "TOOLWARDEN_TEST_TS_SDK")[0]
	bin, fsPrefix := filesystemServer(t)
	node := needNode(t)
	t.Parallel()
	script, err := filepath.Abs("../scripts/clients/tsclient/upstream.cjs")
	require.NoError(t, err)
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap")
	file := upstreamConfig(t, ws, filesystemConfig(bin, fsPrefix, sandbox.WorkspaceDir,
		`capabilities: {grant: ["mcp:call:files/write_file"]}`+"\n"))
	const content = "approved through the TypeScript SDK"
	writeArgs := `{"path":"` + sandbox.WorkspaceDir + `/approved.txt","content":"` + content + `"}`
	cmd := exec.CommandContext(ctxT(t), node, script, prefix, binary, ws, file,
		"files__read_text_file", `{"path":"`+sandbox.WorkspaceDir+`/hello.txt"}`, "files__write_file", writeArgs)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum tsUpstreamSummary
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &sum), stdout.String())

	require.Equal(t, tsSDKVersion, sum.SDK)
	require.Contains(t, sum.Tools, "files__read_text_file")
	require.Contains(t, sum.Tools, "files__write_file")
	require.False(t, sum.Read.IsError, sum.Read.Text)
	require.Contains(t, sum.Read.Text, "hello from toolwarden")
	require.False(t, sum.Write.IsError, sum.Write.Text)
	require.Len(t, sum.Questions, 1, "asked once, for the write only")
	require.Contains(t, sum.Questions[0], "files__write_file")
	require.Contains(t, sum.Questions[0], content, "the question shows the exact arguments")
	got, err := os.ReadFile(filepath.Join(ws, "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, content, string(got))
	var audited []string
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Tool == "files__write_file" {
			audited = append(audited, string(e.Outcome)+" "+e.Rule)
		}
	}
	require.Equal(t, []string{"needs_approval approval.elicit", "approved approval.elicit", "completed allowed"}, audited)
	observe(t, "TypeScript SDK (`@modelcontextprotocol/sdk`)", tsSDKVersion, upstreamColumn,
		"✓ server-filesystem (sandboxed): tools listed, read ran unasked, write_file asked by elicitation with its arguments, ran once accepted")
}

// TestClaudeCodeUpstream: Claude Code (headless, the scripted stand-in for
// the Messages API) sees server-filesystem's tools through toolwarden
// (sandboxed under bubblewrap) as mcp__toolwarden__files__*; its model
// reads a workspace file (read-only: not asked), then writes one, which
// waits for the terminal approver (`toolwarden approvals approve`); the
// approved write's result reaches the model and the file the workspace.
func TestClaudeCodeUpstream(t *testing.T) {
	bin, fsPrefix := filesystemServer(t)
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap")
	const content = "approved through Claude Code"
	write := map[string]any{"path": sandbox.WorkspaceDir + "/approved.txt", "content": content}
	res := claudeRun{ws: ws, env: env, decisions: []decision{approve},
		serve: serveOpts{approvals: true, config: filesystemConfig(bin, fsPrefix, sandbox.WorkspaceDir,
			`capabilities: {grant: ["mcp:call:files/write_file"]}`+"\n")},
		allowed: []string{"files__read_text_file", "files__write_file"}}.run(t,
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__files__read_text_file", map[string]any{"path": sandbox.WorkspaceDir + "/hello.txt"})},
		[]fake.Block{fake.ToolUse("toolu_2", "mcp__toolwarden__files__write_file", write)},
		[]fake.Block{fake.Text("Read the greeting; wrote the file.")})

	require.NoError(t, res.approver.err)
	require.Len(t, res.approver.seen, 1, "only the write waited")
	require.Equal(t, "files__write_file", res.approver.seen[0].Tool)
	require.Contains(t, res.approver.seen[0].Preview, content, "the human sees the exact arguments")
	main := res.fake.Main()
	require.Len(t, main, 3, "prompt, then one request per tool result")
	require.Contains(t, main[0].ToolNames(), "mcp__toolwarden__files__write_file", "the upstream's tools are declared to the model")
	read, ok := main[1].ToolResult("toolu_1")
	require.True(t, ok)
	require.False(t, read.IsError, read.Text)
	require.Contains(t, read.Text, "hello from toolwarden", "the upstream's result reaches the model")
	written, ok := main[2].ToolResult("toolu_2")
	require.True(t, ok)
	require.False(t, written.IsError, written.Text)
	require.Contains(t, written.Text, "Successfully wrote to /workspace/approved.txt")
	got, err := os.ReadFile(filepath.Join(ws, "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, content, string(got))
	require.Equal(t, "Read the greeting; wrote the file.", res.finalText(t))
	observe(t, claudeCode, claudeCodeVersion, upstreamColumn,
		"✓ server-filesystem (sandboxed) as `mcp__toolwarden__files__*`: a read's result and, approved on the terminal, a write's reach the model")
}

// TestCodexUpstream: Codex (`codex exec`, the scripted stand-in for the
// Responses API) sees server-filesystem's tools through toolwarden
// (sandboxed under bubblewrap) in its mcp__toolwarden namespace; its model
// reads a workspace file, then writes one, which Codex passes on
// (default_tools_approval_mode = "approve": the upstream's write_file is
// not annotated read-only) and toolwarden holds for the terminal
// approver; the approved write's result reaches the model.
func TestCodexUpstream(t *testing.T) {
	bin, fsPrefix := filesystemServer(t)
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap")
	const content = "approved through Codex"
	write := map[string]any{"path": sandbox.WorkspaceDir + "/approved.txt", "content": content}
	res := codexRun{ws: ws, env: env, decisions: []decision{approve},
		serve: serveOpts{approvals: true, config: filesystemConfig(bin, fsPrefix, sandbox.WorkspaceDir,
			`capabilities: {grant: ["mcp:call:files/write_file"]}`+"\n")},
		server: "default_tools_approval_mode = \"approve\"\ntool_timeout_sec = 120\n"}.run(t,
		[]openai.Item{openai.Call("call_1", codexNS, "files__read_text_file", map[string]any{"path": sandbox.WorkspaceDir + "/hello.txt"})},
		[]openai.Item{openai.Call("call_2", codexNS, "files__write_file", write)},
		[]openai.Item{openai.Text("Read the greeting; wrote the file.")})

	require.NoError(t, res.approver.err)
	require.Len(t, res.approver.seen, 1, "only the write waited")
	require.Equal(t, "files__write_file", res.approver.seen[0].Tool)
	require.Contains(t, res.approver.seen[0].Preview, content, "the human sees the exact arguments")
	main := res.fake.Main()
	require.Len(t, main, 3, "prompt, then one request per tool result; codex stderr: %s", res.stderr)
	require.Contains(t, main[0].ToolNames(), codexNS+"__files__write_file", "the upstream's tools are declared to the model")
	read, ok := main[1].Output("call_1")
	require.True(t, ok)
	require.Contains(t, read, "hello from toolwarden", "the upstream's result reaches the model")
	written, ok := main[2].Output("call_2")
	require.True(t, ok)
	require.Contains(t, written, "Successfully wrote to /workspace/approved.txt")
	got, err := os.ReadFile(filepath.Join(ws, "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, content, string(got))
	require.Contains(t, res.stdout, "Read the greeting; wrote the file.")
	observe(t, codexCLI, codexVersion, upstreamColumn,
		"✓ server-filesystem (sandboxed) in the `mcp__toolwarden` namespace: a read's result and, approved on the terminal (with `default_tools_approval_mode = \"approve\"`), a write's reach the model")
}

// TestGeminiCLIUpstream: Gemini CLI (headless, the scripted stand-in for
// the Gemini API) sees server-filesystem's tools through toolwarden
// (sandboxed under bubblewrap) as mcp_toolwarden_files__*; its model reads
// a workspace file, then writes one (declared headless only with
// --approval-mode yolo, as for toolwarden's own write_file), which
// toolwarden holds for the terminal approver; the approved write's
// result reaches the model.
func TestGeminiCLIUpstream(t *testing.T) {
	bin, fsPrefix := filesystemServer(t)
	ws, env := geminiWorkspace(t)
	env = append(env, "TOOLWARDEN_EXEC_BACKEND=bwrap")
	const content = "approved through Gemini CLI"
	write := map[string]any{"path": sandbox.WorkspaceDir + "/approved.txt", "content": content}
	res := cliRun{ws: ws, env: env, trust: true, args: []string{"--approval-mode", "yolo"}, decisions: []decision{approve},
		serve: serveOpts{approvals: true, config: filesystemConfig(bin, fsPrefix, sandbox.WorkspaceDir,
			`capabilities: {grant: ["mcp:call:files/write_file"]}`+"\n")}}.run(t,
		gemini.Reply(gemini.Call("r1", "mcp_toolwarden_files__read_text_file", map[string]any{"path": sandbox.WorkspaceDir + "/hello.txt"})),
		gemini.Reply(gemini.Call("w1", "mcp_toolwarden_files__write_file", write)),
		gemini.Reply(gemini.Text("Read the greeting; wrote the file.")))

	require.NoError(t, res.approver.err)
	require.Len(t, res.approver.seen, 1, "only the write waited")
	require.Equal(t, "files__write_file", res.approver.seen[0].Tool)
	require.Contains(t, res.approver.seen[0].Preview, content, "the human sees the exact arguments")
	require.Contains(t, toolwardenDeclared(t, res.fake), "files__write_file", "the upstream's tools are declared to the model")
	reqs := mainRequests(res.fake)
	require.Len(t, reqs, 3, "prompt, then one request per function response")
	response := func(i int) string {
		fr := reqs[i].FunctionResponses()
		require.Len(t, fr, 1)
		raw, err := json.Marshal(fr[0])
		require.NoError(t, err)
		return string(raw)
	}
	require.Contains(t, response(1), "hello from toolwarden", "the upstream's result reaches the model")
	require.Contains(t, response(2), "Successfully wrote to /workspace/approved.txt")
	got, err := os.ReadFile(filepath.Join(ws, "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, content, string(got))
	observe(t, geminiCLI, geminiCLIVersion, upstreamColumn,
		"✓ server-filesystem (sandboxed) as `mcp_toolwarden_files__*`: a read's result and, approved on the terminal (`--approval-mode yolo` to declare write_file), a write's reach the model")
}
