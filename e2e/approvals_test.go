package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// terminalServer starts `toolwarden serve` with approval.channel
// [elicit, terminal] and a client that cannot elicit; the control socket
// lives under runtime (XDG_RUNTIME_DIR). extraEnv is more of serve's
// environment.
func terminalServer(t *testing.T, extraEnv ...string) (c *client.Client, ws string, env []string) {
	t.Helper()
	ws, env = workspace(t)
	runtime := t.TempDir()
	env = append(env, "XDG_RUNTIME_DIR="+runtime)
	env = append(env, extraEnv...)
	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("approval:\n  channel: [elicit, terminal]\n"), 0o644))
	c = client.NewClient(transport.NewStdio(binary, env, "serve", "--workspace", ws, "--config", cfg),
		client.WithDiscoverTimeout(30*time.Second))
	require.NoError(t, c.Start(ctxT(t)))
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = legacyProtocol
	init.Params.ClientInfo = mcp.Implementation{Name: "no-elicitation", Version: "1"}
	_, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(runtime, "toolwarden", "*.sock"))
		return len(m) == 1
	}, 30*time.Second, 10*time.Millisecond, "serve made its control socket")
	return c, ws, env
}

// approvalsCLI runs `toolwarden approvals args...`.
func approvalsCLI(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"approvals"}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitingID waits until one call waits and returns its approval ID.
func waitingID(t *testing.T, env []string) string {
	t.Helper()
	var ps []struct {
		ID, Tool, Preview, Server string
	}
	require.Eventually(t, func() bool {
		out, err := approvalsCLI(t, env, "list", "--json")
		return err == nil && json.Unmarshal([]byte(out), &ps) == nil && len(ps) == 1
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, "write_file", ps[0].Tool)
	require.Contains(t, ps[0].Preview, "Create file notes/")
	return ps[0].ID
}

func TestApprovalsCommands(t *testing.T) {
	c, ws, env := terminalServer(t)

	res := writeAsync(t, c, "notes/cli.txt", "approved on the terminal\n")
	id := waitingID(t, env)
	out, err := approvalsCLI(t, env, "list")
	require.NoError(t, err, out)
	require.Contains(t, out, id)
	require.Contains(t, out, "Create file notes/cli.txt")
	out, err = approvalsCLI(t, env, "approve", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "approved "+id)
	require.Empty(t, <-res)
	require.Equal(t, "approved on the terminal\n", readWS(ws, "notes/cli.txt"))
	out, err = approvalsCLI(t, env, "approve", id)
	require.Error(t, err, "a decision for a call that ended is refused")
	require.Contains(t, out, "no call waits")

	res = writeAsync(t, c, "notes/no.txt", "denied\n")
	id = waitingID(t, env)
	out, err = approvalsCLI(t, env, "deny", id, "--reason", "wrong folder")
	require.NoError(t, err, out)
	require.Equal(t, "denied.approval_declined", <-res)
	require.Equal(t, "<missing>", readWS(ws, "notes/no.txt"))

	out, err = approvalsCLI(t, env, "list", "--server", "999999999")
	require.Error(t, err)
	require.Contains(t, out, `no server "999999999"`)
	observe(t, mcpGo, mcpGoVersion(), approvalColumn, "✓ terminal (`toolwarden approvals approve/deny`, stdio, no elicitation): approved write runs, denial refuses")
}

// ptyOutput collects what a pty prints.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (p *ptyOutput) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

// after returns the output after the first from bytes.
func (p *ptyOutput) after(from int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()[min(from, p.buf.Len()):]
}

func (p *ptyOutput) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Len()
}

// TestApprovalsWatchInTerminal drives `approvals watch` through a pty:
// y approves a call, n denies the next.
func TestApprovalsWatchInTerminal(t *testing.T) {
	t.Parallel()
	c, ws, env := terminalServer(t)
	watch := exec.Command(binary, "approvals", "watch")
	watch.Env = env
	tty, err := pty.Start(watch)
	require.NoError(t, err)
	t.Cleanup(func() {
		tty.Close()
		_ = watch.Process.Kill()
		_ = watch.Wait()
	})
	out := &ptyOutput{}
	go func() { _, _ = io.Copy(out, tty) }() // ends with EIO when the pty closes
	require.Eventually(t, func() bool { return strings.Contains(out.after(0), "Watching 1 server") }, 30*time.Second, 10*time.Millisecond)

	for _, tc := range []struct{ answer, path, want string }{
		{"y", "notes/yes.txt", ""},
		{"n", "notes/no.txt", "denied.approval_declined"},
	} {
		mark := out.len()
		res := writeAsync(t, c, tc.path, "from the pty\n")
		require.Eventually(t, func() bool { return strings.Contains(out.after(mark), "Approve this call? [y/n]") },
			30*time.Second, 10*time.Millisecond, "%q", out.after(mark))
		shown := out.after(mark)
		require.Contains(t, shown, "tool:     write_file")
		require.Contains(t, shown, "Create file "+tc.path)
		_, err := tty.Write([]byte(tc.answer + "\n"))
		require.NoError(t, err)
		require.Equal(t, tc.want, <-res)
	}
	require.Equal(t, "from the pty\n", readWS(ws, "notes/yes.txt"))
	require.Equal(t, "<missing>", readWS(ws, "notes/no.txt"))
}

// TestConfigCheckPrintsChannels: config check prints approval.channel in
// effect, in order; by default elicit alone.
func TestConfigCheckPrintsChannels(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	check := func(args ...string) string {
		cmd := exec.Command(binary, append([]string{"config", "check", "--workspace", ws}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	out := check()
	require.Contains(t, out, "approval_channels:\n  - 'elicit: the client''s form, when it declared elicitation'\n  - 'otherwise: denied.approval_unavailable'\n")
	cfg := filepath.Join(t.TempDir(), "toolwarden.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("approval:\n  channel: [page, elicit, terminal]\n"), 0o644))
	out = check("--config", cfg)
	require.Regexp(t, `approval_channels:\n  - 'page: [^\n]*\n  - 'elicit: [^\n]*\n  - 'terminal: [^\n]*\n[a-z]`, out)
}
