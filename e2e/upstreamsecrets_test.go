package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// digestOf is what the hostile upstream's envdigest tool reports for v.
func digestOf(v string) string {
	return fmt.Sprintf("len=%d sha256=%x", len(v), sha256.Sum256([]byte(v)))
}

// TestUpstreamSecretFile: an upstream's env entry NAME_file gives its
// process the file's contents as NAME (the upstream reports only the
// length and SHA-256); after the file is rotated and the process killed,
// the restarted process has the new value. Neither value is in the
// server's log (at debug) or the audit log. A file others may read stops
// the server at load, naming the key.
func TestUpstreamSecretFile(t *testing.T) {
	t.Parallel()
	bin := buildHostile(t)
	ws, env := workspace(t)
	dir := filepath.Dir(ws)
	secretFile := filepath.Join(dir, "upstream-token")
	first, rotated := randomSecret(t), randomSecret(t)
	require.NoError(t, os.WriteFile(secretFile, []byte(first+"\n"), 0o600))
	// envdigest is asked for UPSTREAM_SECRET by name, which taints the
	// session (guard/chain.go) and would make each later call ask a
	// human: this test is about the file, not the taint.
	file := upstreamConfig(t, ws, `
policy:
  allow: ["hostile__*"]
  taint: "off"
upstreams:
  - name: hostile
    command: [`+bin+`, --attack]
    sandbox: false
    env: {UPSTREAM_SECRET_file: `+secretFile+`}
`)
	c, err := client.NewStdioMCPClient(binary, append(env, "TOOLWARDEN_LOG_LEVEL=debug"), "serve", "--workspace", ws, "--config", file)
	require.NoError(t, err)
	logs := drainStderr(t, c)
	initialize(t, c)

	digest := func() string {
		res := callUpstream(t, c, "hostile__envdigest", map[string]any{"name": "UPSTREAM_SECRET"})
		require.False(t, res.IsError, "%+v", res.Content)
		return text(t, res)
	}
	require.Equal(t, digestOf(first), digest())

	require.NoError(t, os.WriteFile(secretFile, []byte(rotated), 0o600))
	require.NoError(t, syscall.Kill(upstreamPid(t, c), syscall.SIGKILL))
	waitFor(t, "the restart", func() bool {
		return hasOutcome(t, env, "upstream:hostile", guard.OutcomeUpstreamRestarted, "upstream.restart")
	})
	waitFor(t, "the rotated value", func() bool {
		res := callUpstream(t, c, "hostile__envdigest", map[string]any{"name": "UPSTREAM_SECRET"})
		return !res.IsError && text(t, res) == digestOf(rotated)
	})
	require.NoError(t, c.Close())

	serverLog, audit := logs(), auditLines(t, env)
	require.Contains(t, serverLog, "hostile", "the log is the server's")
	for _, v := range []string{first, rotated} {
		require.NotContains(t, serverLog, v, "the secret is never logged")
		require.NotContains(t, audit, v, "the secret is never audited")
	}

	// The attack: a secret file others may read is refused at load.
	require.NoError(t, os.Chmod(secretFile, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--workspace", ws, "--config", file)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "upstreams[0].env.upstream_secret_file: "+secretFile+" has mode 0644")
	require.NotContains(t, string(out), rotated)
}

func randomSecret(t *testing.T) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "upsec-" + hex.EncodeToString(b)
}

// drainStderr copies the stdio server's stderr as it comes (so that it
// never blocks on a full pipe); the returned func, called once the client
// is closed, is all it wrote.
func drainStderr(t *testing.T, c *client.Client) func() string {
	t.Helper()
	r, ok := client.GetStderr(c)
	require.True(t, ok)
	var buf testenv.SyncBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&buf, r)
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return func() string {
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
		return buf.String()
	}
}
