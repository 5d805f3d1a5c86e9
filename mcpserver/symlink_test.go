package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestCapabilityDenyFollowsSymlinks: a symlink inside the workspace does
// not carry a call past a capability denial of the place it points to.
// The tools follow links that stay inside the workspace, so the guard
// checks the path a link resolves to as well as the one named.
func TestCapabilityDenyFollowsSymlinks(t *testing.T) {
	f := newFixture(t)
	f.cfg.Capabilities.Deny = []string{"fs:read:private/**"}
	for _, d := range []string{"private", "public"} {
		require.NoError(t, os.MkdirAll(filepath.Join(f.ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, "private/key"), []byte("KEY-MATERIAL"), 0o644))
	require.NoError(t, os.Symlink("../private/key", filepath.Join(f.ws, "public/link")))
	require.NoError(t, os.Symlink("../private", filepath.Join(f.ws, "public/dir")))
	require.NoError(t, os.Symlink("public/dir", filepath.Join(f.ws, "hop")))
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)

	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "public/link"}},
		{"read_file", map[string]any{"path": "public/dir/key"}},
		{"read_file", map[string]any{"path": "hop/key"}},
		{"read_multiple_files", map[string]any{"paths": []any{"hello.txt", "public/link"}}},
		{"list_directory", map[string]any{"path": "public/dir"}},
		{"directory_tree", map[string]any{"path": "hop"}},
		{"grep_files", map[string]any{"path": "public/dir", "pattern": "KEY"}},
	} {
		res := callTool(t, c, call.tool, call.args)
		text, _ := json.Marshal(res.Content)
		require.NotContains(t, string(text), "KEY-MATERIAL", "%s %v", call.tool, call.args)
		e := errorOf(t, res)
		require.Equal(t, toolerr.DeniedCapability, e.Code, "%s %v: %s", call.tool, call.args, e.Message)
		require.True(t, strings.Contains(e.Message, "private"), e.Message)
	}
	require.False(t, callTool(t, c, "read_file", map[string]any{"path": "hello.txt"}).IsError, "paths without links are unchanged")

	d := b.Explain(ctxT(t), "read_file", json.RawMessage(`{"path":"public/link"}`), false)
	require.Equal(t, `capabilities.deny:"fs:read:private/**"`, d.Rule, "explain follows the link too")
}

// TestWritesThatReadNeedReadCapability: edit_file reads the file it edits
// and move_file carries a file to where it can be read, so both need
// fs:read on their source, not only fs:write: with private/** unreadable,
// moving private/key out to public/ or probing it with edit_file is denied.
func TestWritesThatReadNeedReadCapability(t *testing.T) {
	f := newFixture(t)
	f.cfg.Capabilities.Deny = []string{"fs:read:private/**"}
	for _, d := range []string{"private", "public"} {
		require.NoError(t, os.MkdirAll(filepath.Join(f.ws, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, "private/key"), []byte("KEY-MATERIAL"), 0o644))
	b := f.server(t)
	c, err := client.NewInProcessClient(b.MCP())
	require.NoError(t, err)
	connect(t, c)

	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"move_file", map[string]any{"source": "private/key", "destination": "public/key"}},
		{"move_file", map[string]any{"source": "private", "destination": "public/moved"}},
		{"edit_file", map[string]any{"path": "private/key", "edits": []any{map[string]any{"old_text": "KEY", "new_text": "K"}}, "dry_run": true}},
	} {
		res := callTool(t, c, call.tool, call.args)
		e := errorOf(t, res)
		require.Equal(t, toolerr.DeniedCapability, e.Code, "%s %v: %s", call.tool, call.args, e.Message)
		require.Contains(t, e.Message, "fs:read:private", "the denial names the read need")
	}
	require.FileExists(t, filepath.Join(f.ws, "private/key"), "nothing was moved")
	require.NoFileExists(t, filepath.Join(f.ws, "public/key"))
	require.False(t, callTool(t, c, "move_file", map[string]any{"source": "hello.txt", "destination": "public/hello.txt"}).IsError,
		"a move of a readable file still works")
}
