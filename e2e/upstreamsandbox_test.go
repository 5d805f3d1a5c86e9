package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/audit/audittest"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/sandbox"
)

// upstreamBackends are the sandbox backends sandboxed upstreams are
// tested under.
var upstreamBackends = []string{"runsc", "bwrap"}

// sandboxedHostile builds the hostile upstream into a directory the
// sandbox's user (nobody, as root) may read, for a mounts: entry.
func sandboxedHostile(t *testing.T) (bin, dir string) {
	t.Helper()
	bin = buildHostile(t)
	dir = filepath.Dir(bin)
	require.NoError(t, os.Chmod(dir, 0o755))
	return bin, dir
}

// TestUpstreamSandboxedEverything runs the reference server "everything"
// (npm, node) as a sandboxed upstream, under each backend: its package
// directory is the only host directory it sees besides the system's
// programs (mounts:), and its tools are called through the guard.
func TestUpstreamSandboxedEverything(t *testing.T) {
	bin := testenv.Need(t, "TOOLWARDEN_TEST_SERVER_EVERYTHING")[0]
	// .../<prefix>/node_modules/.bin/mcp-server-everything: the install
	// prefix holds the package and its dependencies.
	prefix := filepath.Dir(filepath.Dir(filepath.Dir(bin)))
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ws, env := workspace(t)
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend)
			file := upstreamConfig(t, ws, `
policy:
  allow: [everything__echo, everything__get-sum]
upstreams:
  - name: everything
    command: [`+bin+`, stdio]
    mounts: [`+prefix+`]
    connect_timeout: 2m
`)
			c, names := serveUpstream(t, ws, env, file)
			require.ElementsMatch(t, []string{"everything__echo", "everything__get-sum"}, names)
			res := callUpstream(t, c, "everything__echo", map[string]any{"message": "hello from the sandbox"})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Contains(t, res.Content[0].(mcp.TextContent).Text, "hello from the sandbox")
			res = callUpstream(t, c, "everything__get-sum", map[string]any{"a": 40, "b": 2})
			require.False(t, res.IsError, "%+v", res.Content)
			require.Contains(t, res.Content[0].(mcp.TextContent).Text, "42")
		})
	}
}

// TestUpstreamSandboxEscape is the attack: a sandboxed upstream that tries
// to list the server's home, write beside the workspace or into it (read-
// only by default), or connect to a port the host listens on, fails at
// each, under each backend; nothing reaches the host.
func TestUpstreamSandboxEscape(t *testing.T) {
	bin, dir := sandboxedHostile(t)
	for _, backend := range upstreamBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ws, env := workspace(t)
			home := filepath.Dir(ws)
			env = append(env, "TOOLWARDEN_EXEC_BACKEND="+backend)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			dialed := make(chan struct{}, 1)
			go func() {
				if c, err := ln.Accept(); err == nil {
					c.Close()
					dialed <- struct{}{}
				}
			}()
			file := upstreamConfig(t, ws, `
policy:
  allow: [hostile__escape]
upstreams:
  - name: hostile
    command: [`+bin+`, --attack]
    mounts: [`+dir+`]
`)
			c, names := serveUpstream(t, ws, env, file)
			require.Equal(t, []string{"hostile__escape"}, names)
			for _, target := range []string{filepath.Join(home, "escaped.txt"), filepath.Join(sandbox.WorkspaceDir, "escaped.txt")} {
				res := callUpstream(t, c, "hostile__escape", map[string]any{"read": home, "write": target, "dial": ln.Addr().String()})
				require.False(t, res.IsError, "%+v", res.Content)
				require.Equal(t, "read refused, write refused, dial refused", res.Content[0].(mcp.TextContent).Text, target)
			}
			for _, p := range []string{filepath.Join(home, "escaped.txt"), filepath.Join(ws, "escaped.txt")} {
				_, err := os.Stat(p)
				require.ErrorIs(t, err, os.ErrNotExist, p)
			}
			select {
			case <-dialed:
				t.Fatal("the sandboxed upstream reached a host port")
			default:
			}
		})
	}
}

// TestUpstreamMountOfHomeRefused: a mount holding the server's home would
// show it to the upstream; the upstream is not started and config check
// says why.
func TestUpstreamMountOfHomeRefused(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	home := filepath.Dir(ws)
	file := upstreamConfig(t, ws, `
upstreams:
  - name: nosy
    command: [/usr/bin/true]
    mounts: [`+filepath.Dir(home)+`]
`)
	out := configCheck(t, env, ws, file)
	require.Contains(t, out, "toolset: upstream:nosy")
	require.Contains(t, out, "would show the server''s home "+home)
}

// configCheck runs toolwarden config check and returns its output.
func configCheck(t *testing.T, env []string, ws, file string) string {
	t.Helper()
	cmd := exec.Command(binary, "config", "check", "--workspace", ws, "--config", file)
	cmd.Env = env
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// waitFor polls f until it is true, for up to a generous bound on a
// loaded machine.
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hasOutcome reports whether the audit log of env has a line of tool
// with outcome and rule.
func hasOutcome(t *testing.T, env []string, tool string, outcome guard.Outcome, rule string) bool {
	for _, e := range audittest.Entries(t, auditPathOf(t, env)) {
		if e.Tool == tool && e.Outcome == outcome && e.Rule == rule {
			return true
		}
	}
	return false
}
