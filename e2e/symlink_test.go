package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// TestHostileSymlinksBinary drives every file tool at a dangling symlink
// out of the workspace and at a symlink loop through the built binary:
// each names its rule (never "internal"), and the operator's links and
// everything outside stay as they were.
func TestHostileSymlinksBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	outside := filepath.Join(filepath.Dir(ws), "nowhere")
	links := map[string]string{"dangling_out": outside, "loop": "loop", "dangling_in": "missing.txt"}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws, "--allow", "*", "--approval", "*=allow")
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)

	escape := struct{ code, rule string }{string(toolerr.PathSymlinkEscape), "path.symlink_inside_workspace"}
	loop := struct{ code, rule string }{string(toolerr.PathInvalid), "path.symlink_loop"}
	for link, want := range map[string]struct{ code, rule string }{"dangling_out": escape, "loop": loop} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"read_file", map[string]any{"path": link}},
			{"write_file", map[string]any{"path": link, "content": "x"}},
			{"write_file", map[string]any{"path": link + "/f", "content": "x", "create_dirs": true}},
			{"edit_file", map[string]any{"path": link, "edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}}},
			{"move_file", map[string]any{"source": "hello.txt", "destination": link + "/hello.txt"}},
			{"create_directory", map[string]any{"path": link}},
			{"create_directory", map[string]any{"path": link + "/sub"}},
			{"list_directory", map[string]any{"path": link}},
			{"directory_tree", map[string]any{"path": link}},
			{"search_files", map[string]any{"path": link, "pattern": "*"}},
			{"grep_files", map[string]any{"path": link, "pattern": "x"}},
		} {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = call.tool, call.args
			res, err := c.CallTool(ctxT(t), req)
			require.NoError(t, err)
			require.True(t, res.IsError, "%s %v", call.tool, call.args)
			e, ok := toolerr.FromResult(res)
			require.True(t, ok, res.Content)
			require.Equal(t, want.code, string(e.Code), "%s %v: %s", call.tool, call.args, e.Message)
			require.Equal(t, want.rule, e.Rule, "%s %v", call.tool, call.args)
			require.Contains(t, e.Message, link, "%s %v", call.tool, call.args)
		}
	}
	for _, link := range []string{"dangling_out", "loop"} {
		got, err := os.Readlink(filepath.Join(ws, link))
		require.NoError(t, err, "%s is still a link", link)
		require.Equal(t, links[link], got)
	}
	require.NoFileExists(t, outside)
	requireFile(t, filepath.Join(ws, "hello.txt"), "hello from toolwarden\n")

	// A dangling link inside is replaced like a link to a file inside;
	// its target is not created.
	callJSON(t, c, "write_file", map[string]any{"path": "dangling_in", "content": "new"})
	fi, err := os.Lstat(filepath.Join(ws, "dangling_in"))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	require.NoFileExists(t, filepath.Join(ws, "missing.txt"))
}

func requireFile(t *testing.T, name, want string) {
	t.Helper()
	got, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}
