package git

import (
	"errors"
	"slices"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// under reports whether p is one of paths or inside one; no paths is the
// whole tree.
func under(p string, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, f := range paths {
		if f == "." || p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// status is the work tree's status, its paths sorted.
func (r *repo) status() (gogit.Status, []string, error) {
	st, err := r.wt.Status()
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, 0, len(st))
	for p := range st {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return st, paths, nil
}

// unstaged is what the work tree changes against the index under paths,
// untracked files included when asked: git diff, and what git_add stages.
func (r *repo) unstaged(paths []string, untracked bool, limit int64) ([]fileChange, error) {
	st, sorted, err := r.status()
	if err != nil {
		return nil, err
	}
	idx, err := r.Storer.Index()
	if err != nil {
		return nil, err
	}
	var out []fileChange
	for _, p := range sorted {
		fs := st[p]
		if fs.Worktree == gogit.Unmodified || !under(p, paths) || (fs.Worktree == gogit.Untracked && !untracked) {
			continue
		}
		c := fileChange{Path: p}
		if e, err := idx.Entry(p); err == nil {
			if c.Old, err = r.entry(e.Hash, e.Mode, limit); err != nil {
				return nil, err
			}
		}
		if c.New, err = r.file(p, limit); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// staged is what the index changes against HEAD under paths: git diff
// --cached, and what git_commit records.
func (r *repo) staged(paths []string, limit int64) ([]fileChange, error) {
	st, sorted, err := r.status()
	if err != nil {
		return nil, err
	}
	idx, err := r.Storer.Index()
	if err != nil {
		return nil, err
	}
	tree, err := r.headTree()
	if err != nil {
		return nil, err
	}
	var out []fileChange
	for _, p := range sorted {
		fs := st[p]
		if fs.Staging == gogit.Unmodified || fs.Staging == gogit.Untracked || !under(p, paths) {
			continue
		}
		c := fileChange{Path: p}
		if tree != nil {
			if f, err := tree.File(p); err == nil {
				if c.Old, err = r.entry(f.Hash, f.Mode, limit); err != nil {
					return nil, err
				}
			}
		}
		if e, err := idx.Entry(p); err == nil {
			if c.New, err = r.entry(e.Hash, e.Mode, limit); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// headTree is HEAD's tree, or nil on an unborn branch.
func (r *repo) headTree() (*object.Tree, error) {
	ref, err := r.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil // unborn: nothing committed yet
	}
	if err != nil {
		return nil, err
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		return nil, err
	}
	return c.Tree()
}
