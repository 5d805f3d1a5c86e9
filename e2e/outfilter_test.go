package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/fakesecret"
)

// serveAndRead runs `toolwarden serve` over stdio with extra arguments,
// reads path through read_file and returns the text the model would see.
func serveAndRead(t *testing.T, ws string, env []string, path string, args ...string) string {
	t.Helper()
	c, err := client.NewStdioMCPClient(binary, env, append([]string{"serve", "--workspace", ws}, args...)...)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": path}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	return res.Content[0].(mcp.TextContent).Text
}

// TestOutputFilterBinary: secrets in a file never reach the client, the
// audit line counts them, the start line holds the tool-surface digest
// (the one `config check` prints), which changes with the surface, and
// the log still verifies.
func TestOutputFilterBinary(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	secrets := fakesecret.All(11)
	var lines []string
	for _, s := range secrets {
		lines = append(lines, s.Line)
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "settings.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	text := serveAndRead(t, ws, env, "settings.txt")
	for _, s := range secrets {
		require.NotContains(t, text, s.Needle(), s.Kind)
		require.Contains(t, text, outfilter.Redaction(s.Rule))
	}

	auditPath := filepath.Join(filepath.Dir(ws), "audit.jsonl")
	entries := audittest.Entries(t, auditPath)
	require.NotEmpty(t, entries)
	require.Equal(t, guard.OutcomeStarted, entries[0].Outcome)
	digest := entries[0].ToolsSHA256
	require.Len(t, digest, 64)
	last := entries[len(entries)-1]
	require.Equal(t, guard.OutcomeCompleted, last.Outcome)
	require.Equal(t, len(secrets), last.Redactions)

	cmd := exec.Command(binary, "config", "check")
	cmd.Env, cmd.Dir = env, ws
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Contains(t, string(out), "tools_sha256: "+digest)
	cmd = exec.Command(binary, "tools", "--workspace", ws)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_, err = cmd.Output()
	require.NoError(t, err)
	require.Contains(t, stderr.String(), "tools_sha256: "+digest, "`tools` prints the same digest on stderr")

	// A narrower surface (one tool fewer advertised) is a different digest.
	serveAndRead(t, ws, env, "hello.txt", "--deny", "write_file")
	entries = audittest.Entries(t, auditPath)
	var starts []string
	for _, e := range entries {
		if e.Outcome == guard.OutcomeStarted {
			starts = append(starts, e.ToolsSHA256)
		}
	}
	require.Len(t, starts, 2)
	require.NotEqual(t, starts[0], starts[1])

	out, err = exec.Command(binary, "audit", "verify", auditPath).CombinedOutput()
	require.NoError(t, err, string(out))
}
