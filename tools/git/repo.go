package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// repo is the workspace repository, opened for one call.
type repo struct {
	*gogit.Repository
	wt *gogit.Worktree
	// dir is the workspace root, gitDir the repository's own directory
	// (both with symlinks resolved).
	dir, gitDir string
}

const repoHint = "The git tools work on the repository at the workspace root, made of files inside the workspace; ask the operator to set one up."

// open opens the repository at the workspace root after checking that
// everything it is made of is inside the workspace.
func (s *Set) open() (*repo, error) {
	if s.ws == nil {
		return nil, toolerr.New(toolerr.BackendUnavailable, "", "the git tools have no workspace")
	}
	dir, err := filepath.EvalSymlinks(s.ws.Dir())
	if err != nil {
		return nil, err
	}
	gitDir, err := findGitDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkAlternates(dir, gitDir); err != nil {
		return nil, err
	}
	storage := filesystem.NewStorage(osfs.New(gitDir, osfs.WithBoundOS()), cache.NewObjectLRUDefault())
	r, err := gogit.Open(storage, osfs.New(dir, osfs.WithBoundOS()))
	if err != nil {
		return nil, toolerr.Wrap(err, toolerr.InvalidArgument, repoHint,
			"the workspace repository cannot be opened: %v", err).WithRule("git.repository")
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, toolerr.Wrap(err, toolerr.InvalidArgument, repoHint,
			"the workspace repository has no work tree: %v", err).WithRule("git.repository")
	}
	return &repo{Repository: r, wt: wt, dir: dir, gitDir: gitDir}, nil
}

// findGitDir returns the repository directory of the workspace root dir:
// its .git directory, or where a .git file ("gitdir: ...") or symlink
// points, which must be inside the workspace. A linked worktree's gitdir
// (and its commondir) is usually another repository's: refused.
func findGitDir(dir string) (string, error) {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	if errors.Is(err, os.ErrNotExist) {
		return "", toolerr.New(toolerr.NotFound, repoHint,
			"the workspace root holds no .git: it is not a git repository").WithRule("git.repository")
	}
	if err != nil {
		return "", err
	}
	target := dotgit
	if fi.Mode().IsRegular() {
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return "", err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return "", toolerr.New(toolerr.InvalidArgument, repoHint, `the workspace's .git file does not start with "gitdir:"`).WithRule("git.repository")
		}
		target = strings.TrimSpace(p)
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
	}
	gitDir, err := inside(dir, target, ".git")
	if err != nil {
		return "", err
	}
	// The parts of the repository go-git reads, each of which a symlink
	// could send elsewhere.
	for _, part := range []string{"objects", "refs", "HEAD", "index", "config", "packed-refs", "info", "hooks"} {
		p := filepath.Join(gitDir, part)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if _, err := inside(dir, p, ".git/"+part); err != nil {
				return "", err
			}
		}
	}
	if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(common))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		if _, err := inside(dir, p, "commondir"); err != nil {
			return "", err
		}
	}
	return gitDir, nil
}

// inside resolves p's symlinks and returns it when it lies strictly
// inside dir; what names where p came from.
func inside(dir, p, what string) (string, error) {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		resolved = filepath.Clean(p) // missing: judged by its name
	}
	rel, err := filepath.Rel(dir, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", toolerr.New(toolerr.PathOutsideWorkspace, repoHint,
			"the repository's %s leads to %s, outside the workspace", what, toolerr.Quote(p)).WithRule("git.gitdir_outside")
	}
	return resolved, nil
}

// checkAlternates refuses a repository that borrows objects from a
// directory outside the workspace (objects/info/alternates): reading them
// would read outside it.
func checkAlternates(dir, gitDir string) error {
	objects := filepath.Join(gitDir, "objects")
	b, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := line
		if !filepath.IsAbs(p) {
			p = filepath.Join(objects, p)
		}
		if _, err := inside(dir, p, "objects/info/alternates"); err != nil {
			return toolerr.New(toolerr.PathOutsideWorkspace, repoHint,
				"the repository borrows objects from %s (objects/info/alternates), outside the workspace", toolerr.Quote(line)).WithRule("git.alternates_outside")
		}
	}
	return nil
}

// head describes HEAD: the branch it names (even unborn), or detached.
type head struct {
	Branch   string
	Detached bool
	Unborn   bool
}

func (r *repo) head() (head, error) {
	ref, err := r.Storer.Reference("HEAD")
	if err != nil {
		return head{}, fmt.Errorf("reading HEAD: %w", err)
	}
	if !ref.Target().IsBranch() {
		return head{Detached: true}, nil
	}
	_, err = r.Head()
	return head{Branch: ref.Target().Short(), Unborn: err != nil}, nil
}
