package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestToolsCannotWriteTheServersOwnConfig: with the config file, its
// tools.d and the audit log inside the workspace, no tool may write,
// replace, move or delete them — even with every write granted and
// approval off — since a model that could would widen its own policy at
// the next start or erase its trail. Other files are written as usual.
func TestToolsCannotWriteTheServersOwnConfig(t *testing.T) {
	f := newFixture(t)
	f.cfg.File = filepath.Join(f.ws, "conf", "tw.yaml")
	f.auditPath = filepath.Join(f.ws, "logs", "audit.jsonl")
	f.cfg.Audit.Path = f.auditPath
	for name, content := range map[string]string{"conf/tw.yaml": "policy: {}\n", "conf/tools.d/a.yaml": "[]\n", "plain.yaml": "x: 1\n"} {
		p := filepath.Join(f.ws, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	c, err := client.NewInProcessClient(f.server(t).MCP())
	require.NoError(t, err)
	connect(t, c)

	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "toolwarden.yaml", "content": "policy: {allow: ['*']}\n"}},
		{"write_file", map[string]any{"path": "./toolwarden.yaml", "content": "x"}},
		{"write_file", map[string]any{"path": "tools.d/evil.yaml", "content": "x", "create_dirs": true}},
		{"create_directory", map[string]any{"path": "tools.d"}},
		{"write_file", map[string]any{"path": "conf/tw.yaml", "content": "approval: {modes: {'*': allow}}\n"}},
		{"edit_file", map[string]any{"path": "conf/tw.yaml", "edits": []any{map[string]any{"old_text": "{}", "new_text": "{allow: ['*']}"}}}},
		{"write_file", map[string]any{"path": "conf/tools.d/b.yaml", "content": "x"}},
		{"delete_file", map[string]any{"path": "conf/tools.d/a.yaml"}},
		{"move_file", map[string]any{"source": "plain.yaml", "destination": "toolwarden.yaml"}},
		{"move_file", map[string]any{"source": "conf", "destination": "conf2"}},
		{"delete_file", map[string]any{"path": "logs/audit.jsonl"}},
		{"write_file", map[string]any{"path": "logs/audit.jsonl", "content": ""}},
		{"write_file", map[string]any{"path": "logs/audit.jsonl.torn", "content": ""}},
		{"delete_file", map[string]any{"path": "logs/audit.jsonl.20261124T101010Z"}},
	} {
		e := errorOf(t, callTool(t, c, call.tool, call.args))
		require.Equal(t, toolerr.DeniedCapability, e.Code, "%s %v: %s", call.tool, call.args, e.Message)
		require.Contains(t, e.Hint, "denied outright", "the hint does not send the model to ask for a grant")
	}
	got, err := os.ReadFile(filepath.Join(f.ws, "conf/tw.yaml"))
	require.NoError(t, err)
	require.Equal(t, "policy: {}\n", string(got), "the config is untouched")
	require.NoFileExists(t, filepath.Join(f.ws, "toolwarden.yaml"))
	require.FileExists(t, filepath.Join(f.ws, "conf/tools.d/a.yaml"))

	require.False(t, callTool(t, c, "write_file", map[string]any{"path": "notes.yaml", "content": "ok\n"}).IsError,
		"other files are written as usual")
	require.False(t, callTool(t, c, "read_file", map[string]any{"path": "conf/tw.yaml"}).IsError,
		"the config can still be read")
}
