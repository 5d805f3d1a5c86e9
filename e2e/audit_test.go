package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

func callReadHello(t *testing.T, c *client.Client) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": "hello.txt"}
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	return res
}

func auditVerify(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(binary, append([]string{"audit", "verify"}, args...)...).CombinedOutput()
	return string(out), err
}

// TestAuditVerifyAcrossRotationsAndATornLine drives the built binary: a
// server rotates its audit log, a crash leaves a torn last line, the next
// start sets it aside, and `audit verify` checks the chain across the
// directory and says what it found.
func TestAuditVerifyAcrossRotationsAndATornLine(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	dir := filepath.Join(filepath.Dir(ws), "audit")
	path := filepath.Join(dir, "audit.jsonl")
	env = append(env, "TOOLWARDEN_AUDIT_PATH="+path, "TOOLWARDEN_AUDIT_MAX_BYTES=4096")
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	initialize(t, c)
	for range 15 {
		require.False(t, callReadHello(t, c).IsError)
	}
	c.Close()

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":99,"`) // a crash in the middle of a write
	require.NoError(t, err)
	require.NoError(t, f.Close())
	cmd := exec.Command(binary, "call", "--workspace", ws, "read_file", `{"path":"hello.txt"}`)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "torn last line set aside")

	report, err := auditVerify(t, dir)
	require.NoError(t, err, report)
	require.Regexp(t, `^ok: \d+ files, \d+ lines, hash chain intact across \d+ rotations`, report)
	require.Contains(t, report, "audit.jsonl.2") // a rotated file, named by its UTC time
	require.Contains(t, report, "starts the chain")
	require.Contains(t, report, "rotated from audit.jsonl.")
	require.Contains(t, report, "a torn last line of 11 bytes (a crash in the middle of a write) was set aside into audit.jsonl.torn")
	require.Contains(t, report, "audit.jsonl.torn: 12 bytes of set-aside torn lines, outside the chain")

	files, err := filepath.Glob(path + ".2*")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 2)
	files = append(files, path)
	slices.Reverse(files)
	byFiles, err := auditVerify(t, files...)
	require.NoError(t, err, byFiles)
	require.Equal(t, strings.ReplaceAll(report, dir+"/", ""), strings.ReplaceAll(byFiles, dir+"/", ""), "files given in any order are ordered by the chain")

	require.NoError(t, os.Remove(files[1])) // a rotated file in the middle
	report, err = auditVerify(t, dir)
	require.Error(t, err)
	require.Contains(t, report, "the files do not form one chain")
}

// TestAuditVolumeFull fills the audit volume under a running server: calls
// are denied with audit.write and a hint, tools/list still works, and calls
// succeed again once space is freed, without a restart.
func TestAuditVolumeFull(t *testing.T) {
	dir := testenv.SmallVolume(t, "64k")
	ws, env := workspace(t)
	env = append(env, "TOOLWARDEN_AUDIT_PATH="+filepath.Join(dir, "audit.jsonl"), "TOOLWARDEN_AUDIT_SYNC=always")
	c, err := client.NewStdioMCPClient(binary, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	defer c.Close()
	initialize(t, c)
	require.False(t, callReadHello(t, c).IsError)

	filler := testenv.Fill(t, dir)
	var denial toolerr.Error
	for i := 0; i < 64 && !strings.Contains(denial.Message, "was not run"); i++ {
		// The audit file's last page may still hold a few lines.
		res := callReadHello(t, c)
		if !res.IsError {
			continue
		}
		var ok bool
		denial, ok = toolerr.FromResult(res)
		require.True(t, ok, res.Content)
		require.Equal(t, toolerr.AuditWrite, denial.Code, denial.Message)
		require.Equal(t, "audit.write", denial.Rule)
		require.Contains(t, denial.Hint, "free space on the audit volume")
		require.NotContains(t, res.Content[0].(mcp.TextContent).Text, "hello from toolwarden")
	}
	require.Contains(t, denial.Message, "the call was not run because its audit line could not be written")

	list, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err, "tools/list needs no audit line")
	require.NotEmpty(t, list.Tools)

	require.NoError(t, os.Remove(filler))
	res := callReadHello(t, c)
	require.False(t, res.IsError, "calls succeed again once space is freed: %v", res.Content)
	require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello from toolwarden")

	report, err := auditVerify(t, dir)
	require.NoError(t, err, report)
	require.NotContains(t, report, "torn", "a failed write leaves no partial line behind")
}

// TestAuditVerifyOfSeveralReplicas: two replicas write their own logs
// (replica IDs from the environment); audit verify of both directories
// reports each chain, and a line edited in one fails the command while the
// other is still reported whole.
func TestAuditVerifyOfSeveralReplicas(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	var dirs []string
	for _, r := range []string{"eu-1", "eu-2"} {
		dir := filepath.Join(filepath.Dir(ws), "audit-"+r)
		dirs = append(dirs, dir)
		cmd := exec.Command(binary, "call", "--workspace", ws, "read_file", `{"path":"hello.txt"}`)
		cmd.Env = append(slices.Clone(env), "TOOLWARDEN_AUDIT_PATH="+filepath.Join(dir, "audit.jsonl"), "TOOLWARDEN_AUDIT_REPLICA_ID="+r)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	report, err := auditVerify(t, dirs...)
	require.NoError(t, err, report)
	require.Regexp(t, `(?s)^replica eu-1:\nok: .*/audit-eu-1/audit.jsonl: \d+ lines, hash chain intact.*replica eu-2:\nok: `, report)

	path := filepath.Join(dirs[0], "audit.jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), `"outcome":"allowed"`, `"outcome":"denied"`, 1)), 0o600))
	report, err = auditVerify(t, dirs...)
	require.Error(t, err)
	require.Contains(t, report, "replica eu-1:\nFAILED: "+path+": line 1: hash mismatch")
	require.Regexp(t, `replica eu-2:\nok: `, report)
	require.Contains(t, report, "1 of 2 chains broken")
}
