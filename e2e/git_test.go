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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// gitIn runs the real git in dir, without the machine's config.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=human@example.com",
		"GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=human@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// callGit calls a tool and decodes its structured result, or returns the
// error result's code and rule.
func callGit(t *testing.T, c *client.Client, name string, args map[string]any, out any) (toolerr.Code, string) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctxT(t), req)
	require.NoError(t, err)
	if res.IsError {
		e, ok := toolerr.FromResult(res)
		require.True(t, ok, "%+v", res.Content)
		return e.Code, e.Rule
	}
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, out))
	return "", ""
}

// TestGitSelfDevelopment drives the built binary, with the shipped
// self-development example config, over stdio with an MCP client that
// approves through elicitation: the model edits a file, sees the diff,
// stages and commits it; the human was shown the staged diff and the
// commit; real git sees the commit by toolwarden's identity. A repository
// that then asks for a hook is refused for writes by rule, and the hook
// never runs.
func TestGitSelfDevelopment(t *testing.T) {
	t.Parallel()
	ws, env := workspace(t)
	gitIn(t, ws, "init", "-q", "-b", "main")
	gitIn(t, ws, "add", "hello.txt")
	gitIn(t, ws, "commit", "-q", "-m", "hello")
	p := &person{action: mcp.ElicitationResponseActionAccept}
	c := stdioClient(t, env, mcp.LATEST_PROTOCOL_VERSION, p,
		"--config", "../configs/examples/selfdev.yaml", "--workspace", ws)

	listed, err := c.ListTools(ctxT(t), mcp.ListToolsRequest{})
	require.NoError(t, err)
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
	}
	for _, n := range []string{"git_status", "git_diff", "git_log", "git_show", "git_add", "git_commit"} {
		require.Contains(t, names, n)
	}

	require.Empty(t, write(t, c, "hello.txt", "hello from the agent\n"))
	var st struct {
		Branch  string
		Entries []struct{ Path, Staged, Worktree string }
	}
	code, _ := callGit(t, c, "git_status", nil, &st)
	require.Empty(t, code)
	assert.Equal(t, "main", st.Branch)
	require.Len(t, st.Entries, 1)
	assert.Equal(t, "modified", st.Entries[0].Worktree)

	var d struct{ Diff string }
	callGit(t, c, "git_diff", map[string]any{}, &d)
	assert.Contains(t, d.Diff, "-hello from toolwarden\n+hello from the agent\n")

	asked := p.asked()
	var add struct{ Staged []struct{ Path string } }
	code, _ = callGit(t, c, "git_add", map[string]any{"paths": []any{"hello.txt"}}, &add)
	require.Empty(t, code)
	require.Equal(t, asked+1, p.asked(), "git_add asked the human")
	assert.Contains(t, p.questions[asked], "+hello from the agent", "the human saw the exact diff staged")

	var commit struct{ Hash string }
	code, _ = callGit(t, c, "git_commit", map[string]any{"message": "hello: greet from the agent"}, &commit)
	require.Empty(t, code)
	assert.Contains(t, p.questions[asked+1], "toolwarden <toolwarden@localhost>")
	assert.Contains(t, p.questions[asked+1], "hello: greet from the agent")
	assert.Equal(t, commit.Hash+"|toolwarden|hello: greet from the agent",
		strings.TrimSpace(gitIn(t, ws, "log", "-1", "--format=%H|%an|%s")))

	var log struct{ Commits []struct{ Subject string } }
	callGit(t, c, "git_log", map[string]any{"max_count": 5}, &log)
	require.Len(t, log.Commits, 2)
	assert.Equal(t, "hello: greet from the agent", log.Commits[0].Subject)

	// Hostile: the repository asks for a hook; the writes are refused
	// before the human is asked, and the hook never runs.
	mark := filepath.Join(filepath.Dir(ws), "hook-ran")
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755))
	require.Empty(t, write(t, c, "hello.txt", "again\n"))
	asked = p.asked()
	code, rule := callGit(t, c, "git_add", map[string]any{"paths": []any{"hello.txt"}}, nil)
	assert.Equal(t, toolerr.DeniedNotAllowed, code)
	assert.Equal(t, "git.hooks", rule)
	assert.Equal(t, asked, p.asked(), "refused before the human is asked")
	gitIn(t, ws, "-c", "core.hooksPath=/dev/null", "add", "hello.txt")
	code, rule = callGit(t, c, "git_commit", map[string]any{"message": "sneaky"}, nil)
	assert.Equal(t, toolerr.DeniedNotAllowed, code)
	assert.Equal(t, "git.hooks", rule)
	assert.NoFileExists(t, mark)

	// Hostile: a path out of the workspace.
	code, rule = callGit(t, c, "git_diff", map[string]any{"paths": []any{"../outside.txt"}}, nil)
	assert.Equal(t, toolerr.PathOutsideWorkspace, code, rule)
}

// A module with one dependency, and the go.sum that verifies it.
const (
	withDepMod = "module example.com/withdep\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n"
	withDepSum = "github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=\n" +
		"github.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n"
	withDepGo   = "package withdep\n\nimport \"github.com/google/uuid\"\n\n// Valid reports whether s is a UUID.\nfunc Valid(s string) bool { _, err := uuid.Parse(s); return err == nil }\n"
	withDepTest = "package withdep\n\nimport \"testing\"\n\nfunc TestValid(t *testing.T) {\n\tif !Valid(\"f47ac10b-58cc-4372-a567-0e02b2c3d479\") || Valid(\"nope\") {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"
)

// TestGoModulesBuildAndTestWithoutNetwork: with the shipped
// self-development config, go_build and go_test build and test a module
// with a dependency inside the sandbox, which has no network: the module
// cache was prepared on the host from go.mod and go.sum and verified.
// A go.sum that does not vouch for the dependency is refused by rule and
// nothing runs.
func TestGoModulesBuildAndTestWithoutNetwork(t *testing.T) {
	t.Parallel()
	testenv.Root(t) // declared cli tools run only in a sandbox
	ws, env := workspace(t)
	for name, text := range map[string]string{"go.mod": withDepMod, "go.sum": withDepSum, "withdep.go": withDepGo, "withdep_test.go": withDepTest} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	env = append(env, "TOOLWARDEN_EXEC_GO_CACHE="+sharedGoCache)
	p := &person{action: mcp.ElicitationResponseActionAccept}
	c := stdioClient(t, env, mcp.LATEST_PROTOCOL_VERSION, p,
		"--config", "../configs/examples/selfdev.yaml", "--workspace", ws)

	var run struct {
		Stdout, Stderr string
		ExitCode       int `json:"exit_code"`
		Sandbox        string
	}
	code, rule := callGit(t, c, "go_build", map[string]any{"dir": "."}, &run)
	require.Empty(t, code, rule)
	require.Equal(t, 0, run.ExitCode, "stdout: %s\nstderr: %s", run.Stdout, run.Stderr)
	require.NotEmpty(t, run.Sandbox, "it ran in a sandbox")

	code, rule = callGit(t, c, "go_test", map[string]any{"dir": "."}, &run)
	require.Empty(t, code, rule)
	require.Equal(t, 0, run.ExitCode, "stdout: %s\nstderr: %s", run.Stdout, run.Stderr)
	assert.Contains(t, run.Stdout, "ok  \texample.com/withdep")

	// Hostile: go.sum no longer vouches for the dependency's code.
	require.NoError(t, os.WriteFile(filepath.Join(ws, "go.sum"), []byte(strings.SplitAfter(withDepSum, "\n")[1]), 0o644))
	code, rule = callGit(t, c, "go_build", map[string]any{"dir": "."}, &run)
	assert.Equal(t, toolerr.InvalidArgument, code)
	assert.Equal(t, "exec.go_modules.go_sum", rule)
}
