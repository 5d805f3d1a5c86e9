package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/sandbox"
)

// startProcess starts argv under r's Starter and returns the process and
// a reader of its stdout lines; the process is killed and waited for at
// the end of the test.
func startProcess(t *testing.T, r sandbox.Runner, req sandbox.StartRequest) (*sandbox.Process, *bufio.Reader) {
	t.Helper()
	s, ok := r.(sandbox.Starter)
	require.True(t, ok, "%s starts no long-lived process", r.Name())
	if req.Env == nil {
		req.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp"}
	}
	p, err := s.Start(context.Background(), req)
	require.NoError(t, err)
	t.Cleanup(func() { p.Kill(); _ = p.Wait() })
	go func() { _, _ = io.Copy(io.Discard, p.Stderr) }()
	return p, bufio.NewReader(p.Stdout)
}

// TestStartSpeaksOverPipes starts a long-lived shell that answers each
// line it reads, as an MCP server does, on every backend: the process
// lives across several exchanges and its end is seen on stdout and by
// Wait, with nothing left of it.
func TestStartSpeaksOverPipes(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			p, out := startProcess(t, r, sandbox.StartRequest{
				Argv: bash(`while read -r line; do [ "$line" = quit ] && exit 7; echo "got $line"; done`)})
			for i := range 3 {
				_, err := fmt.Fprintf(p.Stdin, "ping %d\n", i)
				require.NoError(t, err)
				line, err := out.ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("got ping %d\n", i), line)
			}
			_, err := io.WriteString(p.Stdin, "quit\n")
			require.NoError(t, err)
			_, err = out.ReadString('\n')
			require.ErrorIs(t, err, io.EOF)
			require.NoError(t, p.Wait())
			require.Equal(t, 7, p.ExitCode())
		})
	}
}

// TestStartIsolated is the attack: a started process cannot read a host
// file outside its mounts (here beside its mount), write outside a
// read-only workspace or a read-only mount, or open a network
// connection; it can read its mount.
func TestStartIsolated(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("host secret\n"), 0o644))
	pkg := t.TempDir()
	require.NoError(t, os.Chmod(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "index.js"), []byte("package code\n"), 0o644))
	ws := t.TempDir()
	require.NoError(t, os.Chmod(ws, 0o777))
	script := fmt.Sprintf(`cat %[1]s/index.js
cat %[2]s 2>/dev/null || echo secret-hidden
echo x > %[3]s/new 2>/dev/null && echo ws-written || echo ws-refused
echo x > %[1]s/new 2>/dev/null && echo mount-written || echo mount-refused
(exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo net-open || echo net-refused
read -r _`, pkg, secret, sandbox.WorkspaceDir)
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			p, out := startProcess(t, r, sandbox.StartRequest{Argv: bash(script), Workspace: ws, Mounts: []string{pkg}})
			var got []string
			for range 5 {
				line, err := out.ReadString('\n')
				require.NoError(t, err, "so far: %q", got)
				got = append(got, strings.TrimSpace(line))
			}
			require.Equal(t, []string{"package code", "secret-hidden", "ws-refused", "mount-refused", "net-refused"}, got)
			_, err := io.WriteString(p.Stdin, "done\n")
			require.NoError(t, err)
			require.NoError(t, p.Wait())
			require.Equal(t, 0, p.ExitCode())
			_, err = os.Stat(filepath.Join(ws, "new"))
			require.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// TestStartKill ends a process that would never end, and Wait returns.
func TestStartKill(t *testing.T) {
	for _, r := range runners(t) {
		t.Run(r.Name(), func(t *testing.T) {
			p, out := startProcess(t, r, sandbox.StartRequest{Argv: bash(`echo up; exec sleep 100000`)})
			line, err := out.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "up\n", line)
			p.Kill()
			require.NoError(t, p.Wait())
			require.NotEqual(t, 0, p.ExitCode())
		})
	}
}

// TestStartRefusesMounts is the hostile-input table of mounts.
func TestStartRefusesMounts(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(dir, link))
	for _, m := range []string{"/", "relative/dir", "/usr/lib", "/etc", "/run", "/tmp/../etc", sandbox.WorkspaceDir, link, filepath.Join(dir, "missing")} {
		t.Run(m, func(t *testing.T) {
			for _, r := range runners(t) {
				_, err := r.(sandbox.Starter).Start(context.Background(), sandbox.StartRequest{Argv: []string{"/usr/bin/true"}, Mounts: []string{m}})
				require.ErrorContains(t, err, "mount")
			}
		})
	}
}
