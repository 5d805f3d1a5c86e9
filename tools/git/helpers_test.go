package git_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/git"
)

// fixture is a repository at parent/ws, made by the real git, with the
// git toolset over it, next to parent/outside.
type fixture struct {
	t       *testing.T
	dir     string
	outside string
	tools   map[string]tools.Tool
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	parent := t.TempDir()
	f := &fixture{t: t, dir: filepath.Join(parent, "ws"), outside: filepath.Join(parent, "outside")}
	require.NoError(t, os.Mkdir(f.dir, 0o755))
	require.NoError(t, os.Mkdir(f.outside, 0o755))
	ws, err := sandbox.Open(f.dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	set := git.New(ws, configs.FS{MaxReadBytes: 64 << 10}).SkipSecretFiles([]string{"**/.env", "**/*.pem"})
	f.tools = map[string]tools.Tool{}
	for _, tl := range set.Tools() {
		f.tools[tl.Tool.Name] = tl
	}
	return f
}

// newRepo is a fixture whose workspace is a repository on branch main
// with one commit holding a.txt.
func newRepo(t *testing.T) *fixture {
	f := newFixture(t)
	f.git("init", "-q", "-b", "main")
	f.write("a.txt", "one\ntwo\n")
	f.git("add", "a.txt")
	f.git("commit", "-q", "-m", "first")
	return f
}

// git runs the real git in the workspace, with no user or system config
// (and so no hooks of the machine's).
func (f *fixture) git(args ...string) string {
	f.t.Helper()
	return runGit(f.t, f.dir, args...)
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	name := filepath.Join(f.dir, filepath.FromSlash(rel))
	require.NoError(f.t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(f.t, os.WriteFile(name, []byte(content), 0o644))
}

// call runs a tool's handler as the server would and returns its
// structured result decoded into out, or its error.
func (f *fixture) call(name string, args map[string]any, out any) *toolerr.Error {
	f.t.Helper()
	tl, ok := f.tools[name]
	require.True(f.t, ok, "no tool %q", name)
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := tl.Handler(context.Background(), req)
	require.NoError(f.t, err)
	if res.IsError {
		e, ok := toolerr.FromResult(res)
		require.True(f.t, ok, "%+v", res.Content)
		return &e
	}
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(f.t, err)
	require.NoError(f.t, json.Unmarshal(raw, out))
	return nil
}

// ok is call that must succeed.
func (f *fixture) ok(name string, args map[string]any, out any) {
	f.t.Helper()
	e := f.call(name, args, out)
	require.Nil(f.t, e, "%s: %+v", name, e)
}

// refused is call that must fail with code and rule.
func (f *fixture) refused(name string, args map[string]any, code toolerr.Code, rule string) *toolerr.Error {
	f.t.Helper()
	var out map[string]any
	e := f.call(name, args, &out)
	require.NotNil(f.t, e, "%s must be refused; got %v", name, out)
	require.Equal(f.t, code, e.Code, "%+v", e)
	require.Equal(f.t, rule, e.Rule, "%+v", e)
	return e
}

// preview renders a tool's approval preview.
func (f *fixture) preview(name string, args map[string]any) (string, error) {
	f.t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(f.t, err)
	return f.tools[name].Meta.Preview(context.Background(), raw)
}

func (f *fixture) head() string {
	return strings.TrimSpace(f.git("rev-parse", "HEAD"))
}

// gitEnv is the environment of the real git: no user or system config.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=human@example.com",
		"GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=human@example.com")
}
