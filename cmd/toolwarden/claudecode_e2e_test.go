package main

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
	fake "github.com/toolwarden/toolwarden/internal/anthropicfake"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// claudeCodeVersion is the @anthropic-ai/claude-code version
// scripts/clients/setup-claude-code pins. Its engines field asks for Node
// >= 22; the package is a native binary that runs without Node, so the
// Node 20 here is enough (setup-claude-code checks --version).
const claudeCodeVersion = "2.1.331"

// claudeCode names Claude Code in the client table.
const claudeCode = "Claude Code (`@anthropic-ai/claude-code`)"

// TestClaudeCodeClient runs Claude Code headless (-p) with the built
// binary as its stdio MCP server (--mcp-config) and the scripted stand-in
// for the Messages API (ANTHROPIC_BASE_URL): the model reads hello.txt,
// then writes a file, which toolwarden denies (Claude Code cannot elicit
// here), then answers. The test reads what reached the model.
func TestClaudeCodeClient(t *testing.T) {
	cli := testenv.Need(t, "TOOLWARDEN_TEST_CLAUDE_CODE")[0] // scripts/test sets it up
	ws, env := workspace(t)
	parent := filepath.Dir(ws)
	f := fake.New("mcp__toolwarden__",
		[]fake.Block{fake.ToolUse("toolu_1", "mcp__toolwarden__read_file", map[string]any{"path": "hello.txt"})},
		[]fake.Block{fake.ToolUse("toolu_2", "mcp__toolwarden__write_file", map[string]any{"path": "out.txt", "content": "x"})},
		[]fake.Block{fake.Text("The file greets you; writing was refused.")})
	t.Cleanup(f.Close)

	// toolwarden runs behind a tee, to record what the CLI sends it.
	rpcLog := filepath.Join(parent, "rpc.jsonl")
	wrapper := filepath.Join(parent, "toolwarden-tee")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\ntee \""+rpcLog+"\" | exec \""+binary+"\" \"$@\"\n"), 0o755))
	cfg := filepath.Join(parent, "mcp.json")
	writeSettings(t, cfg, map[string]any{"mcpServers": map[string]any{"toolwarden": map[string]any{
		"type": "stdio", "command": wrapper, "args": []string{"serve", "--workspace", ws}}}})
	args := []string{"-p", "Read hello.txt, then write out.txt.", "--mcp-config", cfg, "--strict-mcp-config",
		"--allowedTools", "mcp__toolwarden__read_file,mcp__toolwarden__write_file", "--output-format", "json"}
	cmd := exec.CommandContext(ctxT(t), cli, args...)
	cmd.Dir = ws
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+f.URL, "ANTHROPIC_API_KEY=sk-ant-fake", "DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1",
		// By default the CLI declares MCP tools lazily, through its ToolSearch
		// tool; this declares them all up front, as docs/clients.md says.
		"ENABLE_TOOL_SEARCH=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "claude %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout.String(), stderr.String())
	assert.Empty(t, f.Problems())

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
	assert.True(t, declaresElicitation(readRPC(t, rpcLog)), "Claude Code declared elicitation")
	_, err := os.Stat(filepath.Join(ws, "out.txt"))
	assert.True(t, os.IsNotExist(err))

	var out struct{ Result string }
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), stdout.String())
	assert.Equal(t, "The file greets you; writing was refused.", out.Result)
	t.Logf("the denied write reached the model as: %q", denied.Text)
	if !t.Failed() {
		observe(t, claudeCode, claudeCodeVersion, "tools", "✓ all 12, as `mcp__toolwarden__*`")
		observe(t, claudeCode, claudeCodeVersion, "structured output", "✓ read_file's result reaches the model, as its structured content's JSON")
		observe(t, claudeCode, claudeCodeVersion, "errors", "✓ code, hint and rule reach the model, `is_error` set")
		observe(t, claudeCode, claudeCodeVersion, "elicitation", "declared; headless (`-p`) cancels the question: `denied.approval_declined` reaches the model")
	}
}
