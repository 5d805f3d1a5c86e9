package git_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools/git"
)

func TestStatusAndDiff(t *testing.T) {
	f := newRepo(t)
	f.write("a.txt", "one\nTWO\n")
	f.write("new.txt", "fresh\n")

	var st git.StatusOut
	f.ok("git_status", nil, &st)
	assert.Equal(t, "main", st.Branch)
	assert.Equal(t, f.head(), st.Head)
	assert.False(t, st.Clean)
	assert.Equal(t, []git.StatusEntry{
		{Path: "a.txt", Staged: "unmodified", Worktree: "modified"},
		{Path: "new.txt", Staged: "untracked", Worktree: "untracked"},
	}, st.Entries)

	var d git.DiffOut
	f.ok("git_diff", nil, &d)
	assert.Contains(t, d.Diff, "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n")
	assert.Contains(t, d.Diff, "-two\n+TWO\n")
	assert.NotContains(t, d.Diff, "new.txt", "untracked files are git_status's")
	assert.Equal(t, []git.FileStat{{Path: "a.txt", Status: "modified", Additions: 1, Deletions: 1}}, d.Files)

	f.ok("git_diff", map[string]any{"staged": true}, &d)
	assert.Empty(t, d.Diff)
	f.ok("git_diff", map[string]any{"paths": []any{"other"}}, &d)
	assert.Empty(t, d.Files)
}

func TestAddAndCommitAsGitSeesThem(t *testing.T) {
	f := newRepo(t)
	f.write("a.txt", "one\nTWO\n")
	f.write("src/new.go", "package src\n")
	require.NoError(t, os.Remove(filepath.Join(f.dir, "a.txt")))
	f.write("a.txt", "one\nTWO\n")

	p, err := f.preview("git_add", map[string]any{"paths": []any{"."}})
	require.NoError(t, err)
	assert.Contains(t, p, "Stage 2 file(s) on branch main")
	assert.Contains(t, p, "-two\n+TWO\n", "the preview shows the exact diff staged")
	assert.Contains(t, p, "--- /dev/null\n+++ b/src/new.go\n")

	var add git.AddOut
	f.ok("git_add", map[string]any{"paths": []any{"."}}, &add)
	require.Len(t, add.Staged, 2)
	assert.Equal(t, "A  src/new.go\nM  a.txt\n", sortedLines(f.git("status", "--porcelain")), "real git sees what was staged")

	var d git.DiffOut
	f.ok("git_diff", map[string]any{"staged": true}, &d)
	assert.Contains(t, d.Diff, "+package src\n")

	msg := "src: add a package\n\nAnd change a.txt."
	p, err = f.preview("git_commit", map[string]any{"message": msg})
	require.NoError(t, err)
	assert.Contains(t, p, "Commit on branch main as toolwarden <toolwarden@localhost>")
	assert.Contains(t, p, "    src: add a package\n")
	assert.Contains(t, p, "2 file(s) changed, 2 insertion(s), 1 deletion(s)")

	var c git.CommitOut
	f.ok("git_commit", map[string]any{"message": msg}, &c)
	assert.Equal(t, f.head(), c.Hash)
	assert.Equal(t, "toolwarden <toolwarden@localhost>|toolwarden <toolwarden@localhost>|src: add a package",
		strings.TrimSpace(f.git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%s")))
	assert.Empty(t, f.git("status", "--porcelain"))
	f.git("fsck", "--strict")

	var log git.LogOut
	f.ok("git_log", map[string]any{"max_count": 1}, &log)
	require.Len(t, log.Commits, 1)
	assert.True(t, log.More)
	assert.Equal(t, "src: add a package", log.Commits[0].Subject)
	f.ok("git_log", map[string]any{"path": "src/new.go"}, &log)
	assert.Len(t, log.Commits, 1)

	var show git.ShowOut
	f.ok("git_show", map[string]any{"rev": "HEAD"}, &show)
	assert.Equal(t, msg, show.Commit.Message)
	assert.Contains(t, show.Diff, "+package src\n")
	f.ok("git_show", map[string]any{"rev": "HEAD~1"}, &show)
	assert.Equal(t, "first", show.Commit.Subject)
	assert.Contains(t, show.Diff, "--- /dev/null\n+++ b/a.txt\n", "a root commit diffs against nothing")

	f.refused("git_commit", map[string]any{"message": "again"}, toolerr.InvalidArgument, "git.nothing_staged")
	f.refused("git_add", map[string]any{"paths": []any{"."}}, toolerr.InvalidArgument, "git.nothing_to_stage")
}

func TestDeletionIsStaged(t *testing.T) {
	f := newRepo(t)
	require.NoError(t, os.Remove(filepath.Join(f.dir, "a.txt")))
	var add git.AddOut
	f.ok("git_add", map[string]any{"paths": []any{"a.txt"}}, &add)
	assert.Equal(t, "deleted", add.Staged[0].Status)
	assert.Equal(t, "D  a.txt\n", f.git("status", "--porcelain"))
}

func TestFirstCommitOnUnbornBranch(t *testing.T) {
	f := newFixture(t)
	f.git("init", "-q", "-b", "trunk")
	var log git.LogOut
	f.ok("git_log", nil, &log)
	assert.Empty(t, log.Commits)
	f.write("x.txt", "x\n")
	var add git.AddOut
	f.ok("git_add", map[string]any{"paths": []any{"x.txt"}}, &add)
	var c git.CommitOut
	f.ok("git_commit", map[string]any{"message": "start"}, &c)
	assert.Equal(t, "trunk", c.Branch)
	assert.Equal(t, "start\n", f.git("log", "--format=%s"))
}

func TestSecretFilesAreWithheldAndNotStagedByDirectory(t *testing.T) {
	f := newRepo(t)
	f.write(".env", "TOKEN=first\n")
	f.git("add", ".env")
	f.git("commit", "-q", "-m", "oops")
	f.write(".env", "TOKEN=hunter2\n")
	f.write("b.txt", "b\n")

	var d git.DiffOut
	f.ok("git_diff", nil, &d)
	assert.NotContains(t, d.Diff, "hunter2")
	assert.Contains(t, d.Diff, "contents withheld: capabilities.secret_files")
	require.Len(t, d.Files, 1)
	assert.True(t, d.Files[0].Withheld)

	var show git.ShowOut
	f.ok("git_show", nil, &show)
	assert.NotContains(t, show.Diff, "first")

	var add git.AddOut
	f.ok("git_add", map[string]any{"paths": []any{"."}}, &add)
	assert.Equal(t, []string{".env"}, add.Skipped)
	require.Len(t, add.Staged, 1)
	assert.Equal(t, "b.txt", add.Staged[0].Path)
}

func TestMessageRefusesControlAndInvisibleCharacters(t *testing.T) {
	f := newRepo(t)
	f.write("a.txt", "changed\n")
	f.git("add", "a.txt")
	for name, msg := range map[string]string{
		"escape":     "fix \x1b[2J things",
		"bidi":       "fix \u202Egnp.exe",
		"zero-width": "fix\u200b it",
		"carriage":   "fix\rfake subject",
		"empty":      " \n ",
		"line sep":   "fix\u2028more",
		"too long":   strings.Repeat("x", 10001),
	} {
		t.Run(name, func(t *testing.T) {
			f.refused("git_commit", map[string]any{"message": msg}, toolerr.InvalidText, "git.message")
		})
	}
	var c git.CommitOut
	f.ok("git_commit", map[string]any{"message": "subject\n\n\tbody with a tab\n"}, &c)
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSubmoduleShowsAsGit: a submodule's entry is a commit of another
// repository, shown as git shows it, never read as a blob.
func TestSubmoduleShowsAsGit(t *testing.T) {
	f := newRepo(t)
	runGit(t, f.outside, "init", "-q", "-b", "main")
	runGit(t, f.outside, "commit", "-q", "--allow-empty", "-m", "sub")
	f.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", f.outside, "sub")
	f.git("commit", "-q", "-m", "add sub")
	var show git.ShowOut
	f.ok("git_show", nil, &show)
	assert.Contains(t, show.Diff, "+Subproject commit ")
	var st git.StatusOut
	f.ok("git_status", nil, &st)
}
