package e2e

import (
	"encoding/json"
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
	buildversion "github.com/toolwarden/toolwarden/internal/version"
)

const versionPkg = "github.com/toolwarden/toolwarden/internal/version"

// buildToolwarden builds the command with extra go build flags.
func buildToolwarden(t *testing.T, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolwarden")
	out, err := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, toolwardenPkg)...).CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func runOut(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// TestVersionStamped builds the binary as the release does (-ldflags -X)
// and finds the stamped version, commit and date in --version, the
// version subcommand, the MCP serverInfo a real stdio client sees, and
// the audit log's start line.
func TestVersionStamped(t *testing.T) {
	const ver, rev, date = "9.8.7-test", "0123456789abcdef0123456789abcdef01234567", "2026-11-24T19:00:00Z"
	bin := buildToolwarden(t, "-ldflags", "-X "+versionPkg+".version="+ver+" -X "+versionPkg+".commit="+rev+" -X "+versionPkg+".date="+date)

	want := "toolwarden version " + ver + " (commit " + rev + ", date " + date + ", go"
	require.True(t, strings.HasPrefix(runOut(t, bin, "--version"), want), runOut(t, bin, "--version"))
	require.True(t, strings.HasPrefix(runOut(t, bin, "version"), want))
	var info buildversion.Info
	require.NoError(t, json.Unmarshal([]byte(runOut(t, bin, "version", "--json")), &info))
	require.Equal(t, ver, info.Version)
	require.Equal(t, rev, info.Commit)
	require.Equal(t, date, info.Date)

	ws, env := workspace(t)
	c, err := client.NewStdioMCPClient(bin, env, "serve", "--workspace", ws)
	require.NoError(t, err)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "1"}
	res, err := c.Initialize(ctxT(t), init)
	require.NoError(t, err)
	require.Equal(t, "toolwarden", res.ServerInfo.Name)
	require.Equal(t, ver, res.ServerInfo.Version)
	require.NoError(t, c.Close())

	entries := audittest.Entries(t, filepath.Join(filepath.Dir(ws), "audit.jsonl"))
	require.NotEmpty(t, entries)
	start := entries[0]
	require.Equal(t, guard.OutcomeStarted, start.Outcome)
	require.True(t, strings.HasPrefix(start.Version, ver+" (commit "+rev+", date "+date), start.Version)
}

// TestVersionFromVCS builds without -ldflags but with VCS stamping, as go
// build in a clone does: the commit comes from the toolchain's vcs.revision
// and the version is Go's pseudo-version. (go install module@version
// records the module version only; internal/version's table test covers
// that input.) It builds a one-commit copy of the working tree: Go
// finds no VCS in a git worktree, whose .git is a file, and HEAD may not
// hold the code under test yet.
func TestVersionFromVCS(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.Mkdir(src, 0o755))
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Dir = src
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	copyTree := exec.Command("bash", "-c", `cd "$(git rev-parse --show-toplevel)" && git ls-files -co --exclude-standard -z | tar -c --null -T - | tar -x -C "$0"`, src)
	out, err := copyTree.CombinedOutput()
	require.NoError(t, err, string(out))
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "snapshot")
	head := git("rev-parse", "HEAD")

	bin := filepath.Join(t.TempDir(), "toolwarden")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/toolwarden")
	build.Dir = src
	out, err = build.CombinedOutput()
	require.NoError(t, err, string(out))

	var info buildversion.Info
	require.NoError(t, json.Unmarshal([]byte(runOut(t, bin, "version", "--json")), &info))
	require.Equal(t, head, info.Commit)
	require.NotEmpty(t, info.Date, "vcs.time")
	require.False(t, info.Modified)
	require.True(t, strings.HasPrefix(info.Version, "0.0.0-"), "Go stamps a pseudo-version from the commit: %s", info.Version)
}

// TestVersionUnstamped: the binary the other end-to-end tests use is built
// without VCS stamping or -ldflags and still answers, as "dev".
func TestVersionUnstamped(t *testing.T) {
	t.Parallel()
	require.True(t, strings.HasPrefix(runOut(t, binary, "--version"), "toolwarden version dev "), runOut(t, binary, "--version"))
}
