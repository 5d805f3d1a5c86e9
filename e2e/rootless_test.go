package e2e

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestRunScriptAsOrdinaryAccount starts the built binary as an ordinary
// account, as an IDE would, in that user's private (0700) project, and
// runs scripts through MCP: they run sandboxed without root, and what
// they write belongs to the user with ordinary permissions.
func TestRunScriptAsOrdinaryAccount(t *testing.T) {
	testenv.Root(t) // to start the server as another account
	need := testenv.Need(t, AccountEnv, AccountHomeEnv)
	acct := lookupAccount(t, need[0])
	home := need[1]

	base, bin := accountDir(t, "toolwarden-rootless-")
	ws := filepath.Join(base, "project")
	require.NoError(t, os.Mkdir(ws, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "in.txt"), []byte("from the project\n"), 0o600))
	audit := filepath.Join(base, "audit")
	require.NoError(t, os.Mkdir(audit, 0o700))
	acct.chown(t, ws, filepath.Join(ws, "in.txt"), audit)

	// The account's HOME, where scripts/sandbox/nonroot put runsc and the
	// prepared GOCACHE, as a user's own would have them.
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	env := []string{"HOME=" + home, "USER=" + acct.name, "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"TOOLWARDEN_EXEC_WORKSPACE_WRITABLE=true", "TOOLWARDEN_AUDIT_PATH=" + filepath.Join(audit, "audit.jsonl")}
	for _, backend := range []string{"runsc", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			tr := transport.NewStdioWithOptions(bin, append(env, "TOOLWARDEN_EXEC_BACKEND="+backend),
				[]string{"serve", "--workspace", ws, "--allow", "run_script", "--approval", "run_script=allow"},
				transport.WithCommandFunc(acct.commandIn(ws)))
			c := connectAs(t, client.NewClient(tr, client.WithDiscoverTimeout(30*time.Second)), mcp.LATEST_PROTOCOL_VERSION)
			runScriptsAs(t, c, ws, acct.uid, acct.gid, backend+"-rootless")
		})
	}
}

// runScriptsAs runs a python, a bash and a go script that copy in.txt to
// the workspace, and checks what they wrote belongs to uid:gid.
func runScriptsAs(t *testing.T, c *client.Client, ws string, uid, gid int, sandbox string) {

	scripts := map[string]string{
		"python": "import os\nopen('out-python.txt', 'w').write(open('in.txt').read())\nprint(os.getuid())",
		"bash":   "cat in.txt > out-bash.txt; id -u",
		"go": "package main\nimport (\"fmt\"; \"os\")\nfunc main() { fmt.Println(os.Getuid()); " +
			"b, _ := os.ReadFile(\"in.txt\"); os.WriteFile(\"out-go.txt\", b, 0o644) }",
	}
	for _, lang := range []string{"python", "bash", "go"} {
		t.Run(lang, func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name = "run_script"
			req.Params.Arguments = map[string]any{"interpreter": lang, "script": scripts[lang], "timeout_seconds": 60}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			res, err := c.CallTool(ctx, req)
			require.NoError(t, err)
			text := res.Content[0].(mcp.TextContent).Text
			require.False(t, res.IsError, text)
			var out struct {
				ExitCode int    `json:"exit_code"`
				Sandbox  string `json:"sandbox"`
				Stderr   string `json:"stderr"`
			}
			require.NoError(t, json.Unmarshal([]byte(text), &out))
			require.Equal(t, 0, out.ExitCode, out.Stderr)
			require.Contains(t, out.Sandbox, sandbox, "an ordinary user's server runs the rootless backends")

			defer os.Remove(filepath.Join(ws, "out-"+lang+".txt"))
			fi, err := os.Stat(filepath.Join(ws, "out-"+lang+".txt"))
			require.NoError(t, err)
			st := fi.Sys().(*syscall.Stat_t)
			require.Equal(t, []uint32{uint32(uid), uint32(gid)}, []uint32{st.Uid, st.Gid}, "the file belongs to the user")
			require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
			data, err := os.ReadFile(filepath.Join(ws, "out-"+lang+".txt"))
			require.NoError(t, err)
			require.Equal(t, "from the project\n", string(data))
		})
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
