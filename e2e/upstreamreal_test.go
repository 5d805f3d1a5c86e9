package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
)

// The real MCP servers that no one here wrote, run as sandboxed upstreams:
// @modelcontextprotocol/server-filesystem (npm, node) and mcp-server-git
// (PyPI, python), installed pinned by scripts/upstreams/setup-server-*.

// filesystemServer is the installed server-filesystem program and its
// install prefix (its package and dependencies), for mounts:.
func filesystemServer(t *testing.T) (bin, prefix string) {
	t.Helper()
	bin = testenv.Need(t, "TOOLWARDEN_TEST_SERVER_FILESYSTEM")[0]
	// .../<prefix>/node_modules/.bin/mcp-server-filesystem
	return bin, filepath.Dir(filepath.Dir(filepath.Dir(bin)))
}

// filesystemConfig is the config of server-filesystem as the upstream
// "files", serving root (inside the sandbox), with extra appended.
func filesystemConfig(bin, prefix, root, extra string) string {
	return `
policy:
  allow: ["files__*"]
exec: {workspace_writable: true}
upstreams:
  - name: files
    command: [` + bin + `, ` + root + `]
    mounts: [` + prefix + `]
    connect_timeout: 2m
` + extra
}

// textOf is the text of res's content, joined.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// TestUpstreamRealFilesystem runs the reference server "filesystem"
// sandboxed, under each backend, serving /workspace: its tools are listed
// namespaced; a read-only tool reads a workspace file; write_file (not
// annotated read-only) is refused without the capability, and with it
// asks for approval, which a client without elicitation cannot give, so
// nothing is written; a read outside /workspace is refused by the
// server's own roots, and with the server's roots widened to / the
// sandbox still shows it nothing of the host.
func TestUpstreamRealFilesystem(t *testing.T) {
	bin, prefix := filesystemServer(t)
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ws, env := workspace(t)
			parent := filepath.Dir(ws)
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend)
			file := upstreamConfig(t, ws, filesystemConfig(bin, prefix, sandbox.WorkspaceDir, ""))
			c, names := serveUpstream(t, ws, env, file)
			for _, want := range []string{"files__read_text_file", "files__list_directory", "files__write_file", "files__edit_file", "files__list_allowed_directories"} {
				require.Contains(t, names, want)
			}

			res := callUpstream(t, c, "files__read_text_file", map[string]any{"path": sandbox.WorkspaceDir + "/hello.txt"})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Contains(t, textOf(res), "hello from toolwarden")
			res = callUpstream(t, c, "files__list_directory", map[string]any{"path": sandbox.WorkspaceDir})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Contains(t, textOf(res), "[FILE] hello.txt")

			// write_file: not annotated read-only, so no default capability.
			deniedWith(t, callUpstream(t, c, "files__write_file", map[string]any{"path": sandbox.WorkspaceDir + "/new.txt", "content": "x"}), toolerr.DeniedCapability)
			// The server's schema, made strict, refuses an argument it does
			// not declare before the server sees it.
			deniedWith(t, callUpstream(t, c, "files__read_text_file", map[string]any{"path": "hello.txt", "mode": "raw"}), toolerr.InvalidSchema)

			// Outside /workspace: the server's own roots refuse it.
			for _, p := range []string{sandbox.WorkspaceDir + "/../outside.txt", filepath.Join(parent, "outside.txt"), "/etc/passwd"} {
				res = callUpstream(t, c, "files__read_text_file", map[string]any{"path": p})
				require.True(t, res.IsError, "%s: %+v", p, res.Content)
				require.Contains(t, textOf(res), "outside allowed directories", p)
				require.NotContains(t, textOf(res), secret)
			}

			// With the capability granted, write_file asks the human; this
			// client cannot answer (no elicitation), so nothing is written.
			file = upstreamConfig(t, ws, filesystemConfig(bin, prefix, sandbox.WorkspaceDir,
				`capabilities: {grant: ["mcp:call:files/write_file"]}`+"\n"))
			c, _ = serveUpstream(t, ws, env, file)
			deniedWith(t, callUpstream(t, c, "files__write_file", map[string]any{"path": sandbox.WorkspaceDir + "/new.txt", "content": "x"}), toolerr.DeniedApprovalUnavailable)
			_, err := os.Stat(filepath.Join(ws, "new.txt"))
			require.ErrorIs(t, err, os.ErrNotExist, "a refused write reached the workspace")
			require.True(t, hasOutcome(t, env, "files__write_file", guard.NeedsApproval, "approval.elicit"))

			// The server's roots widened to /: the sandbox still shows it
			// none of the host's files.
			file = upstreamConfig(t, ws, filesystemConfig(bin, prefix, "/", ""))
			c, _ = serveUpstream(t, ws, env, file)
			res = callUpstream(t, c, "files__read_text_file", map[string]any{"path": filepath.Join(parent, "outside.txt")})
			require.True(t, res.IsError, "%+v", res.Content)
			require.Contains(t, textOf(res), "ENOENT")
			require.NotContains(t, textOf(res), secret)
			res = callUpstream(t, c, "files__list_directory", map[string]any{"path": filepath.Dir(ws)})
			require.NotContains(t, textOf(res), "outside.txt")
		})
	}
}
