package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// SrtEnv names the directory holding the pinned sandbox runtime's `srt`
// and the Node it needs (scripts/clients/setup-srt).
const SrtEnv = "TOOLWARDEN_TEST_SRT"

// TestVSCodeSandbox starts the built binary the way VS Code starts a
// local stdio server whose mcp.json entry says "sandboxEnabled": true:
// under Anthropic's sandbox runtime (srt), as an ordinary account, with
// the settings file VS Code writes (network: registry.npmjs.org; writes:
// ~/.npm and the server's working directory, plus what the entry's
// "sandbox" object adds).
func TestVSCodeSandbox(t *testing.T) {
	testenv.Root(t) // to start the server as another account
	need := testenv.Need(t, SrtEnv, AccountEnv)
	srtBin := need[0]
	acct := lookupAccount(t, need[1])

	base, bin := accountDir(t, "toolwarden-srt-")
	home := filepath.Join(base, "home")
	ws := filepath.Join(base, "project")
	tmp := filepath.Join(base, "vscode-tmp")
	for _, d := range []string{home, ws, tmp} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("from the project\n"), 0o600))
	acct.chown(t, home, ws, tmp, filepath.Join(ws, "notes.txt"))
	state := filepath.Join(home, ".local", "state", "toolwarden")

	// settings is the file VS Code hands srt: its defaults merged with the
	// server entry's "sandbox" object (extra).
	settings := func(t *testing.T, allowWrite []string, extra map[string]any) string {
		s := map[string]any{
			"network":    map[string]any{"allowedDomains": []string{"registry.npmjs.org"}, "deniedDomains": []string{}},
			"filesystem": map[string]any{"allowWrite": append([]string{"~/.npm", ws}, allowWrite...), "denyRead": []string{}, "denyWrite": []string{}},
		}
		for k, v := range extra {
			s[k] = v
		}
		b, err := json.Marshal(s)
		require.NoError(t, err)
		f := filepath.Join(base, t.Name()[len("TestVSCodeSandbox/"):]+".json")
		require.NoError(t, os.WriteFile(f, b, 0o644))
		return f
	}
	env := []string{"HOME=" + home, "USER=" + acct.name, "PATH=" + srtBin + ":/usr/bin:/bin", "TMPDIR=" + tmp}
	serverArgs := func(settingsFile string) []string {
		return []string{"--settings", settingsFile, bin, "serve", "--workspace", ws,
			"--allow", "run_script", "--approval", "run_script=allow", "--approval", "write_file=allow"}
	}
	asAccount := acct.commandIn(ws)
	connect := func(t *testing.T, settingsFile string) *client.Client {
		tr := transport.NewStdioWithOptions(filepath.Join(srtBin, "srt"), env, serverArgs(settingsFile),
			transport.WithCommandFunc(asAccount))
		return connectAs(t, client.NewClient(tr, client.WithDiscoverTimeout(30*time.Second)), mcp.LATEST_PROTOCOL_VERSION)
	}
	call := func(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := c.CallTool(ctx, req)
		require.NoError(t, err)
		return res
	}

	// A new user's entry: nothing but "sandboxEnabled": true. The audit
	// log's default place is outside what srt lets the server write, and
	// the server stops, saying where it runs and what to add.
	t.Run("defaults", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd, _ := asAccount(ctx, filepath.Join(srtBin, "srt"), env, serverArgs(settings(t, nil, nil)))
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stderr = bytes.NewReader(nil), &stderr
		err := cmd.Run()
		require.Error(t, err, "the server started without a writable audit log")
		msg := stderr.String()
		require.Contains(t, msg, "audit log")
		require.Contains(t, msg, "Anthropic's sandbox runtime (srt")
		require.Contains(t, msg, `"sandboxEnabled": true`)
		require.Contains(t, msg, `add "`+state+`" there`)
		require.Contains(t, msg, "audit.path (TOOLWARDEN_AUDIT_PATH)")
	})

	require.NoError(t, os.MkdirAll(state, 0o700))
	acct.chown(t, filepath.Join(home, ".local"), filepath.Join(home, ".local", "state"), state)

	// The audit directory added to allowWrite: the file tools work, and
	// run_script answers backend.unavailable naming the outer sandbox and
	// the setting that lets toolwarden's own sandbox run.
	t.Run("audit writable", func(t *testing.T) {
		c := connect(t, settings(t, []string{"~/.local/state/toolwarden"}, nil))
		res := call(t, c, "read_file", map[string]any{"path": "notes.txt"})
		require.False(t, res.IsError, "%v", res.Content)
		require.Contains(t, res.Content[0].(mcp.TextContent).Text, "from the project")
		res = call(t, c, "write_file", map[string]any{"path": "out.txt", "content": "written under srt\n"})
		require.False(t, res.IsError, "%v", res.Content)
		got, err := os.ReadFile(filepath.Join(ws, "out.txt"))
		require.NoError(t, err)
		require.Equal(t, "written under srt\n", string(got))

		res = call(t, c, "run_script", map[string]any{"interpreter": "python", "script": "print(6*7)"})
		require.True(t, res.IsError)
		require.Equal(t, toolerr.BackendUnavailable, toolerr.ErrorCode(res))
		text := res.Content[0].(mcp.TextContent).Text
		require.Contains(t, text, "Anthropic's sandbox runtime (srt")
		require.Contains(t, text, `"allowNestedUserNamespaces": true`)
		require.Contains(t, text, `turn "sandboxEnabled" off`)
	})

	// With "allowNestedUserNamespaces": true in the entry's "sandbox"
	// object, toolwarden's own (rootless bubblewrap) sandbox runs inside.
	t.Run("nested namespaces allowed", func(t *testing.T) {
		c := connect(t, settings(t, []string{"~/.local/state/toolwarden"}, map[string]any{"allowNestedUserNamespaces": true}))
		res := call(t, c, "run_script", map[string]any{"interpreter": "python", "script": "print(6*7)"})
		text := res.Content[0].(mcp.TextContent).Text
		require.False(t, res.IsError, text)
		var out struct {
			Stdout  string `json:"stdout"`
			Sandbox string `json:"sandbox"`
		}
		require.NoError(t, json.Unmarshal([]byte(text), &out))
		require.Equal(t, "42\n", out.Stdout)
		require.Contains(t, out.Sandbox, "rootless")
	})
}
