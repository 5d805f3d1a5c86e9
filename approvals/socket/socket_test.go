package socket

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/approvals"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

func serve(t *testing.T, dir string) (*approvals.Hub, *Server) {
	t.Helper()
	hub := approvals.New()
	s, err := Listen(hub, dir)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return hub, s
}

func pending(t *testing.T, hub *approvals.Hub, id string) (approvals.Request, <-chan approvals.Decision) {
	t.Helper()
	now := time.Now()
	r := approvals.Request{ID: id, Tool: "write_file", Digest: "d-" + id, Session: "s", Preview: "Create file x", Created: now, Expires: now.Add(time.Minute)}
	out := make(chan approvals.Decision, 1)
	go func() { d, _ := hub.Ask(context.Background(), r); out <- d }()
	require.Eventually(t, func() bool { _, ok := hub.Get(id); return ok }, 5*time.Second, time.Millisecond)
	return r, out
}

func TestDirIsPrivate(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir, err := Dir()
	require.NoError(t, err)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, os.Chmod(dir, 0o755))
	_, err = Dir()
	require.ErrorContains(t, err, "open to other users")
}

func TestListDecideWatch(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir, err := Dir()
	require.NoError(t, err)
	hub, s := serve(t, dir)
	fi, err := os.Stat(s.Path())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	socks, err := Sockets(dir)
	require.NoError(t, err)
	require.Equal(t, []string{s.Path()}, socks)
	require.Equal(t, fmt.Sprint(os.Getpid()), ServerName(socks[0]))

	watcher, err := Dial(s.Path())
	require.NoError(t, err)
	defer watcher.Close()
	require.NoError(t, watcher.Watch())

	r, out := pending(t, hub, "a")
	ev, err := watcher.Next()
	require.NoError(t, err)
	require.Equal(t, "pending", ev.Event.Kind)
	require.Equal(t, "a", ev.Event.Request.ID)

	c, err := Dial(s.Path())
	require.NoError(t, err)
	defer c.Close()
	list, err := c.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.ErrorContains(t, c.Decide("a", "other", true, ""), "other arguments")
	require.ErrorContains(t, c.Decide("zz", r.Digest, true, ""), "no call waits")
	require.NoError(t, c.Decide("a", r.Digest, false, "not today"))
	d := <-out
	require.False(t, d.Approve)
	require.Equal(t, "not today", d.Reason)
	require.Equal(t, fmt.Sprintf("terminal uid=%d", os.Getuid()), d.By)
	require.ErrorContains(t, c.Decide("a", r.Digest, true, ""), "no call waits", "the call ended")
	ev, err = watcher.Next()
	require.NoError(t, err)
	require.Equal(t, "done", ev.Event.Kind)
}

func TestCheckPeer(t *testing.T) {
	require.NoError(t, checkPeer(1000, 1000))
	require.EqualError(t, checkPeer(1001, 1000), "refused: uid 1001 may not use the control socket of a server running as uid 1000")
	require.Error(t, checkPeer(0, 1000), "not even root decides for another user's server")
}

// helperEnv makes the test binary a client that lists over a socket
// and prints the outcome (TestOtherUIDRefused runs it as another uid).
const helperEnv = "APPROVALSOCK_TEST_CLIENT"

func TestMain(m *testing.M) {
	if sock := os.Getenv(helperEnv); sock != "" {
		c, err := Dial(sock)
		if err == nil {
			_, err = c.List()
		}
		fmt.Println("client:", err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOtherUIDRefused: a process of another user that can reach the
// socket (its mode widened here on purpose) is refused by the peer check.
func TestOtherUIDRefused(t *testing.T) {
	testenv.Root(t)
	dir, err := os.MkdirTemp("", "approvalsock-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	hub, s := serve(t, dir)
	pending(t, hub, "x")
	require.NoError(t, os.Chmod(s.Path(), 0o666))
	// The test binary, copied where the other user can run it.
	self, err := os.Executable()
	require.NoError(t, err)
	exe := filepath.Join(dir, "client.test")
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(exe, b, 0o755))
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+s.Path())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "client: refused: uid 65534 may not use the control socket of a server running as uid 0")
	_, waits := hub.Get("x")
	require.True(t, waits)
}

// TestRequestIsReadStrictly: a request line is read with exact member
// names, once each: encoding/json took "Approve" for "approve" and let the
// last duplicate win, so a line a reviewer reads as a denial approved.
func TestRequestIsReadStrictly(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir, err := Dir()
	require.NoError(t, err)
	hub, s := serve(t, dir)
	r, out := pending(t, hub, "a")
	for name, line := range map[string]string{
		"case twin": `{"op":"decide","id":"a","digest":"` + r.Digest + `","approve":false,"Approve":true}`,
		"duplicate": `{"op":"decide","id":"a","digest":"` + r.Digest + `","approve":false,"approve":true}`,
		"unknown":   `{"op":"decide","id":"a","digest":"` + r.Digest + `","approve":true,"by":"page"}`,
	} {
		conn, err := net.Dial("unix", s.Path())
		require.NoError(t, err)
		_, err = conn.Write([]byte(line + "\n"))
		require.NoError(t, err)
		answer, err := bufio.NewReader(conn).ReadString('\n')
		require.NoError(t, err)
		conn.Close()
		require.Contains(t, answer, "bad request", name)
		_, waiting := hub.Get("a")
		require.True(t, waiting, "%s: nothing was decided", name)
	}
	c, err := Dial(s.Path())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Decide("a", r.Digest, false, ""), "a well-formed line still decides")
	require.False(t, (<-out).Approve)
}
