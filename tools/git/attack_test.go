package git_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/git"
)

// TestRepositoryAskingForWhatIsNeverRunRefusesWrites: a repository whose
// config or attributes ask git to run something (a hook, a filter, an
// fsmonitor) or to read config toolwarden does not see, is refused for
// git_add and git_commit naming the rule, before asking the human; the
// reads go on and say what they do not apply. A hook planted to leave
// a mark never runs.
func TestRepositoryAskingForWhatIsNeverRunRefusesWrites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
		rule  string
	}{
		{"core.hooksPath", func(f *fixture) { f.git("config", "core.hooksPath", ".githooks") }, "git.hooks"},
		{"installed hook", func(f *fixture) {
			hook := filepath.Join(f.dir, ".git", "hooks", "pre-commit")
			require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+filepath.Join(f.outside, "ran")+"\n"), 0o755))
		}, "git.hooks"},
		{"filter clean", func(f *fixture) { f.git("config", "filter.crypt.clean", "openssl enc") }, "git.filters"},
		{"filter process", func(f *fixture) { f.git("config", "filter.lfs.process", "git-lfs filter-process") }, "git.filters"},
		{".gitattributes filter", func(f *fixture) { f.write("sub/.gitattributes", "*.bin filter=lfs diff=lfs\n") }, "git.filters"},
		{"info/attributes filter", func(f *fixture) {
			require.NoError(t, os.WriteFile(filepath.Join(f.dir, ".git", "info", "attributes"), []byte("* filter=x\n"), 0o644))
		}, "git.filters"},
		{"core.fsmonitor", func(f *fixture) { f.git("config", "core.fsmonitor", "./watch.sh") }, "git.fsmonitor"},
		{"include", func(f *fixture) { f.git("config", "include.path", "/elsewhere/config") }, "git.include"},
		{"core.worktree", func(f *fixture) { f.git("config", "core.worktree", "/elsewhere") }, "git.worktree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRepo(t)
			require.NoError(t, os.MkdirAll(filepath.Join(f.dir, ".git", "info"), 0o755))
			tc.setup(f)
			f.write("a.txt", "changed\n")
			args := map[string]any{"paths": []any{"a.txt"}}
			_, err := f.preview("git_add", args)
			require.Error(t, err, "refused before the human is asked")
			assert.Equal(t, tc.rule, toolerr.As(err).Rule)
			f.refused("git_add", args, toolerr.DeniedNotAllowed, tc.rule)

			f.git("--work-tree", f.dir, "add", "a.txt") // the human stages with git
			f.refused("git_commit", map[string]any{"message": "m"}, toolerr.DeniedNotAllowed, tc.rule)
			assert.NoFileExists(t, filepath.Join(f.outside, "ran"))

			var st git.StatusOut
			f.ok("git_status", nil, &st)
			require.NotEmpty(t, st.Warnings)
			assert.Contains(t, st.Warnings[0], tc.rule+": ")
			var d git.DiffOut
			f.ok("git_diff", map[string]any{"staged": true}, &d)
			assert.Contains(t, d.Diff, "+changed")
		})
	}
}

func TestWritesRefusedOnDetachedOrConflictedState(t *testing.T) {
	t.Run("detached HEAD", func(t *testing.T) {
		f := newRepo(t)
		f.git("checkout", "-q", "--detach")
		f.write("a.txt", "changed\n")
		f.refused("git_add", map[string]any{"paths": []any{"a.txt"}}, toolerr.Conflict, "git.detached_head")
		f.git("add", "a.txt")
		f.refused("git_commit", map[string]any{"message": "m"}, toolerr.Conflict, "git.detached_head")
		var st git.StatusOut
		f.ok("git_status", nil, &st)
		assert.True(t, st.Detached)
	})
	t.Run("merge conflict", func(t *testing.T) {
		f := newRepo(t)
		f.git("checkout", "-q", "-b", "other")
		f.write("a.txt", "other\n")
		f.git("commit", "-q", "-am", "other")
		f.git("checkout", "-q", "main")
		f.write("a.txt", "main\n")
		f.git("commit", "-q", "-am", "main")
		require.Error(t, tryGit(f, "merge", "other"), "the merge conflicts")
		f.refused("git_commit", map[string]any{"message": "m"}, toolerr.Conflict, "git.in_progress")
		require.NoError(t, os.Remove(filepath.Join(f.dir, ".git", "MERGE_HEAD")))
		f.refused("git_commit", map[string]any{"message": "m"}, toolerr.Conflict, "git.conflicted")
	})
}

func TestRepositoryOutsideTheWorkspaceIsRefused(t *testing.T) {
	t.Run("gitdir file", func(t *testing.T) {
		f := newFixture(t)
		runGit(t, f.outside, "init", "-q")
		f.write(".git", "gitdir: "+filepath.Join(f.outside, ".git")+"\n")
		f.refused("git_status", nil, toolerr.PathOutsideWorkspace, "git.gitdir_outside")
		f.refused("git_log", nil, toolerr.PathOutsideWorkspace, "git.gitdir_outside")
	})
	t.Run("relative gitdir climbing out", func(t *testing.T) {
		f := newFixture(t)
		runGit(t, f.outside, "init", "-q")
		f.write(".git", "gitdir: ../outside/.git\n")
		f.refused("git_status", nil, toolerr.PathOutsideWorkspace, "git.gitdir_outside")
	})
	t.Run(".git symlink", func(t *testing.T) {
		f := newFixture(t)
		runGit(t, f.outside, "init", "-q")
		require.NoError(t, os.Symlink(filepath.Join(f.outside, ".git"), filepath.Join(f.dir, ".git")))
		f.refused("git_status", nil, toolerr.PathOutsideWorkspace, "git.gitdir_outside")
	})
	t.Run("alternates", func(t *testing.T) {
		f := newRepo(t)
		runGit(t, f.outside, "init", "-q")
		alt := filepath.Join(f.dir, ".git", "objects", "info", "alternates")
		require.NoError(t, os.WriteFile(alt, []byte(filepath.Join(f.outside, ".git", "objects")+"\n"), 0o644))
		f.refused("git_show", nil, toolerr.PathOutsideWorkspace, "git.alternates_outside")
		require.NoError(t, os.WriteFile(alt, []byte("../../../outside/.git/objects\n"), 0o644))
		f.refused("git_log", nil, toolerr.PathOutsideWorkspace, "git.alternates_outside")
	})
	t.Run("objects symlinked out", func(t *testing.T) {
		f := newRepo(t)
		runGit(t, f.outside, "init", "-q")
		objects := filepath.Join(f.dir, ".git", "objects")
		require.NoError(t, os.Rename(objects, filepath.Join(f.outside, "objects")))
		require.NoError(t, os.Symlink(filepath.Join(f.outside, "objects"), objects))
		f.refused("git_log", nil, toolerr.PathOutsideWorkspace, "git.gitdir_outside")
	})
	t.Run("gitdir inside the workspace", func(t *testing.T) {
		f := newFixture(t)
		runGit(t, f.dir, "init", "-q", "-b", "main", "--separate-git-dir", filepath.Join(f.dir, "meta"))
		var st git.StatusOut
		f.ok("git_status", nil, &st)
		assert.Equal(t, "main", st.Branch)
	})
	t.Run("not a repository", func(t *testing.T) {
		f := newFixture(t)
		f.refused("git_status", nil, toolerr.NotFound, "git.repository")
		f.refused("git_add", map[string]any{"paths": []any{"."}}, toolerr.NotFound, "git.repository")
	})
}

func TestPathArgumentsAreConfined(t *testing.T) {
	f := newRepo(t)
	f.write("a.txt", "changed\n")
	for _, tc := range []struct {
		path string
		code toolerr.Code
		rule string
	}{
		{"../outside", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{"/etc/passwd", toolerr.PathOutsideWorkspace, "path.relative"},
		{"a/../../x", toolerr.PathOutsideWorkspace, "path.inside_workspace"},
		{".git/config", toolerr.InvalidArgument, "git.path"},
		{".git", toolerr.InvalidArgument, "git.path"},
		{"a\x00b", toolerr.PathInvalid, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			for _, tool := range []string{"git_diff", "git_add"} {
				var out map[string]any
				e := f.call(tool, map[string]any{"paths": []any{tc.path}}, &out)
				require.NotNil(t, e, "%s %q: %v", tool, tc.path, out)
				assert.Equal(t, tc.code, e.Code, "%s: %+v", tool, e)
				if tc.rule != "" {
					assert.Equal(t, tc.rule, e.Rule, "%s: %+v", tool, e)
				}
			}
			f.refused("git_log", map[string]any{"path": tc.path}, tc.code, orRule(tc.rule, f, tc.path))
		})
	}
}

// orRule is the rule git_log reports for path: the same as the others'.
func orRule(rule string, f *fixture, path string) string {
	if rule != "" {
		return rule
	}
	var out map[string]any
	return f.call("git_log", map[string]any{"path": path}, &out).Rule
}

// TestSymlinkOutIsShownAsALink: a work-tree symlink to a file outside
// the workspace diffs and stages as git stores it, its target's name, and
// never the target's contents.
func TestSymlinkOutIsShownAsALink(t *testing.T) {
	f := newRepo(t)
	secret := filepath.Join(f.outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP SECRET\n"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(f.dir, "leak")))
	p, err := f.preview("git_add", map[string]any{"paths": []any{"leak"}})
	require.NoError(t, err)
	assert.NotContains(t, p, "TOP SECRET")
	assert.Contains(t, p, "+"+secret)
	var add git.AddOut
	f.ok("git_add", map[string]any{"paths": []any{"leak"}}, &add)
	var d git.DiffOut
	f.ok("git_diff", map[string]any{"staged": true}, &d)
	assert.NotContains(t, d.Diff, "TOP SECRET")
	assert.Equal(t, "120000", f.git("ls-files", "-s", "leak")[:6], "staged as a symlink")
}

// tryGit runs git where it is meant to fail (a conflicting merge).
func tryGit(f *fixture, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	cmd.Env = gitEnv()
	return cmd.Run()
}
