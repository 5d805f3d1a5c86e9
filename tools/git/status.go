package git

import (
	"context"

	gogit "github.com/go-git/go-git/v5"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/internal/workspacepath"
	"github.com/toolwarden/toolwarden/tools"
)

// StatusIn is git_status's input.
type StatusIn struct{}

// StatusEntry is one path that differs somewhere.
type StatusEntry struct {
	Path     string `json:"path"`
	Staged   string `json:"staged" jsonschema:"The index against HEAD: unmodified, added, modified, deleted, renamed, copied, unmerged or untracked"`
	Worktree string `json:"worktree" jsonschema:"The work tree against the index, in the same words"`
}

// StatusOut is git_status's output.
type StatusOut struct {
	Branch   string        `json:"branch,omitempty" jsonschema:"The branch HEAD names; empty when detached"`
	Head     string        `json:"head,omitempty" jsonschema:"The commit HEAD points at; empty before the first commit"`
	Detached bool          `json:"detached"`
	Clean    bool          `json:"clean" jsonschema:"True when nothing is staged, changed or untracked"`
	Entries  []StatusEntry `json:"entries"`
	// Warnings name the repository's settings toolwarden does not apply.
	Warnings []string `json:"warnings,omitempty" jsonschema:"Settings of the repository that git would apply and toolwarden does not (hooks, filters, fsmonitor), each with its rule"`
}

const gitStatusDesc = `Show the workspace repository's state: branch, HEAD commit and every changed, staged or untracked path.

When to use: before git_diff, git_add or git_commit, to see what changed.

Parameters: none.

Returns: branch (empty when detached), head (commit hash, empty before the first commit), detached, clean, entries (path, staged, worktree: unmodified, added, modified, deleted, renamed, copied, unmerged or untracked; ignored files are not listed), warnings (settings git would apply and toolwarden does not: with a filter configured, filtered files compare as their raw bytes).

Errors: not_found (rule git.repository) when the workspace root is not a repository; invalid_argument.path_outside_workspace (git.gitdir_outside, git.alternates_outside) when the repository's .git or object alternates lead outside the workspace.

Side effects: none; no hook or fsmonitor runs.

Example: {}`

func (s *Set) gitStatus() tools.Tool {
	return tools.New("git_status", gitStatusDesc,
		tools.Annotations{Title: "Git status", ReadOnly: true, Idempotent: true},
		readMeta,
		func(ctx context.Context, _ StatusIn) (StatusOut, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			r, err := s.open()
			if err != nil {
				return StatusOut{}, err
			}
			h, err := r.head()
			if err != nil {
				return StatusOut{}, err
			}
			out := StatusOut{Branch: h.Branch, Detached: h.Detached, Entries: []StatusEntry{}}
			if ref, err := r.Head(); err == nil {
				out.Head = ref.Hash().String()
			}
			st, paths, err := r.status()
			if err != nil {
				return StatusOut{}, err
			}
			for _, p := range paths {
				out.Entries = append(out.Entries, StatusEntry{Path: p, Staged: codeName(st[p].Staging), Worktree: codeName(st[p].Worktree)})
			}
			out.Clean = len(out.Entries) == 0
			out.Warnings, err = r.warnings()
			return out, err
		})
}

func codeName(c gogit.StatusCode) string {
	switch c {
	case gogit.Untracked:
		return "untracked"
	case gogit.Modified:
		return "modified"
	case gogit.Added:
		return "added"
	case gogit.Deleted:
		return "deleted"
	case gogit.Renamed:
		return "renamed"
	case gogit.Copied:
		return "copied"
	case gogit.UpdatedButUnmerged:
		return "unmerged"
	}
	return "unmodified"
}

// warnings are the hazards as the reads report them.
func (r *repo) warnings() ([]string, error) {
	hz, err := r.hazards()
	var out []string
	for _, h := range hz {
		out = append(out, h.String())
	}
	return out, err
}

// DiffIn is git_diff's input.
type DiffIn struct {
	Staged bool     `json:"staged,omitempty" jsonschema:"Compare the index with HEAD (what git_commit would record) instead of the work tree with the index"`
	Paths  []string `json:"paths,omitempty" jsonschema:"Limit the diff to these workspace-relative files or directories"`
}

// DiffOut is git_diff's output.
type DiffOut struct {
	Diff      string     `json:"diff" jsonschema:"The unified diff"`
	Files     []FileStat `json:"files"`
	Truncated bool       `json:"truncated" jsonschema:"True when the diff was cut at fs.max_read_bytes; files still lists every change"`
	Warnings  []string   `json:"warnings,omitempty" jsonschema:"Settings of the repository that git would apply and toolwarden does not, each with its rule"`
}

const gitDiffDesc = `Show the workspace repository's uncommitted changes as a unified diff.

When to use: to review changes before git_add (default: work tree against the index) or before git_commit (staged: the index against HEAD).

Parameters:
- staged: true to diff the index against HEAD, what git_commit would record (default false: the work tree against the index; untracked files are not shown, git_status lists them).
- paths: workspace-relative files or directories to limit the diff to (default: all).

Returns: diff (unified, cut at fs.max_read_bytes), files (path, status, additions, deletions, binary, withheld), truncated, warnings (as git_status). Files matching capabilities.secret_files are listed but their contents are withheld.

Errors: invalid_argument.path_outside_workspace for a path that leaves the workspace; invalid_argument (rule git.path) for a path inside .git; not_found (rule git.repository) when the workspace is not a repository.

Side effects: none.

Example: {"staged": false, "paths": ["src"]}`

func (s *Set) gitDiff() tools.Tool {
	return tools.New("git_diff", gitDiffDesc,
		tools.Annotations{Title: "Git diff", ReadOnly: true, Idempotent: true},
		readMeta,
		func(ctx context.Context, in DiffIn) (DiffOut, error) {
			paths, err := cleanPaths(in.Paths)
			if err != nil {
				return DiffOut{}, err
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			r, err := s.open()
			if err != nil {
				return DiffOut{}, err
			}
			var changes []fileChange
			if in.Staged {
				changes, err = r.staged(paths, s.limits.MaxReadBytes)
			} else {
				changes, err = r.unstaged(paths, false, s.limits.MaxReadBytes)
			}
			if err != nil {
				return DiffOut{}, err
			}
			p := s.render(changes, s.limits.MaxReadBytes)
			out := DiffOut{Diff: p.Text, Files: orEmpty(p.Files), Truncated: p.Truncated}
			out.Warnings, err = r.warnings()
			return out, err
		})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// cleanPaths cleans path arguments by the workspace's rules; a path into
// the repository's own directory is refused: the tools show and stage
// work-tree files, never git's.
func cleanPaths(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, p := range in {
		c, err := workspacepath.Clean(p)
		if err != nil {
			return nil, err
		}
		if c == ".git" || len(c) > 5 && c[:5] == ".git/" {
			return nil, toolerr.New(toolerr.InvalidArgument, "Name work-tree files; the repository's own directory is not one.",
				"path %s is inside .git", toolerr.Quote(p)).WithRule("git.path")
		}
		out = append(out, c)
	}
	return out, nil
}
