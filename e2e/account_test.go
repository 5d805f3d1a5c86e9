package e2e

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/stretchr/testify/require"
)

// The ordinary account scripts/sandbox/nonroot prepares for the tests
// that run toolwarden as an ordinary user, and its HOME (holding its
// runsc and its prepared GOCACHE).
const (
	AccountEnv     = "TOOLWARDEN_TEST_ACCOUNT"
	AccountHomeEnv = "TOOLWARDEN_TEST_ACCOUNT_HOME"
)

// account is an ordinary account the tests start processes as (which
// needs root: testenv.Root).
type account struct {
	name     string
	uid, gid int
}

// lookupAccount is the account called name.
func lookupAccount(t *testing.T, name string) account {
	t.Helper()
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)
	return account{name: u.Username, uid: uid, gid: gid}
}

// chown gives paths to the account.
func (a account) chown(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.Chown(p, a.uid, a.gid))
	}
}

// commandIn starts commands as the account, in dir, with the environment
// it is handed and no other: a transport.CommandFunc for a stdio client,
// or called directly for a command the test runs itself.
func (a account) commandIn(dir string) transport.CommandFunc {
	return func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Env, cmd.Dir = env, dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid)}}
		return cmd, nil
	}
}

// accountDir is a directory every account can enter (removed after the
// test), holding a copy of the built binary the account can run: the
// test's own build directory may be closed to it.
func accountDir(t *testing.T, prefix string) (base, bin string) {
	t.Helper()
	base, err := os.MkdirTemp("", prefix)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	bin = filepath.Join(base, "toolwarden")
	copyFile(t, binary, bin, 0o755)
	return base, bin
}
