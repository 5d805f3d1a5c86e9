package git

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// maxLog bounds git_log's max_count.
const maxLog = 200

// LogIn is git_log's input.
type LogIn struct {
	Rev      string `json:"rev,omitempty" jsonschema:"Where to start: a branch, tag or commit hash (default HEAD)"`
	Path     string `json:"path,omitempty" jsonschema:"Only commits that change this workspace-relative file"`
	MaxCount int    `json:"max_count,omitempty" jsonschema:"How many commits at most (default 20, at most 200)"`
}

// CommitInfo is one commit's metadata.
type CommitInfo struct {
	Hash    string   `json:"hash"`
	Author  string   `json:"author" jsonschema:"Name <email>"`
	Date    string   `json:"date" jsonschema:"Author date, RFC 3339"`
	Subject string   `json:"subject"`
	Message string   `json:"message,omitempty"`
	Parents []string `json:"parents,omitempty"`
}

// LogOut is git_log's output.
type LogOut struct {
	Commits []CommitInfo `json:"commits"`
	More    bool         `json:"more" jsonschema:"True when older commits were left out by max_count"`
}

const gitLogDesc = `List the workspace repository's commits, newest first.

When to use: to see recent history or who last changed a file; then git_show for one commit.

Parameters:
- rev: where to start, a branch, tag or commit hash (default HEAD).
- path: only commits that change this workspace-relative file.
- max_count: how many commits at most (default 20, at most 200).

Returns: commits (hash, author, date, subject, parents), more (true when max_count cut the list). An unborn branch has no commits.

Errors: not_found (rule git.rev) for an unknown rev; invalid_argument.path_outside_workspace; not_found (rule git.repository) when the workspace is not a repository.

Side effects: none.

Example: {"max_count": 5, "path": "README.md"}`

func (s *Set) gitLog() tools.Tool {
	return tools.New("git_log", gitLogDesc,
		tools.Annotations{Title: "Git log", ReadOnly: true, Idempotent: true},
		readMeta,
		func(ctx context.Context, in LogIn) (LogOut, error) {
			n := in.MaxCount
			switch {
			case n == 0:
				n = 20
			case n < 0 || n > maxLog:
				return LogOut{}, toolerr.New(toolerr.InvalidArgument, "Ask for 1 to 200 commits.",
					"max_count is %d; the limit is %d", in.MaxCount, maxLog).WithRule("git.max_count")
			}
			var paths []string
			if in.Path != "" {
				var err error
				if paths, err = cleanPaths([]string{in.Path}); err != nil {
					return LogOut{}, err
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			r, err := s.open()
			if err != nil {
				return LogOut{}, err
			}
			from, err := r.resolve(in.Rev)
			if errors.Is(err, errUnborn) {
				return LogOut{Commits: []CommitInfo{}}, nil
			}
			if err != nil {
				return LogOut{}, err
			}
			opts := &gogit.LogOptions{From: from}
			if len(paths) == 1 && paths[0] != "." {
				opts.FileName = &paths[0]
			}
			iter, err := r.Log(opts)
			if err != nil {
				return LogOut{}, err
			}
			defer iter.Close()
			out := LogOut{Commits: []CommitInfo{}}
			for {
				c, err := iter.Next()
				if errors.Is(err, io.EOF) {
					return out, nil
				}
				if err != nil {
					return LogOut{}, err
				}
				if len(out.Commits) == n {
					out.More = true
					return out, nil
				}
				if err := ctx.Err(); err != nil {
					return LogOut{}, err
				}
				out.Commits = append(out.Commits, info(c, false))
			}
		})
}

var errUnborn = errors.New("unborn branch")

// resolve resolves a revision (default HEAD) to a commit.
func (r *repo) resolve(rev string) (plumbing.Hash, error) {
	if rev == "" {
		ref, err := r.Head()
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return plumbing.ZeroHash, errUnborn
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return ref.Hash(), nil
	}
	if len(rev) > 256 || !utf8.ValidString(rev) || strings.ContainsFunc(rev, forbiddenRune) {
		return plumbing.ZeroHash, toolerr.New(toolerr.InvalidArgument, "Name a branch, tag or commit hash.",
			"rev %s is not a revision", toolerr.Quote(rev)).WithRule("git.rev")
	}
	h, err := r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, toolerr.New(toolerr.NotFound, "Name a branch, tag or commit hash that exists; git_log lists commits.",
			"rev %s does not resolve to a commit", toolerr.Quote(rev)).WithRule("git.rev")
	}
	return *h, nil
}

func info(c *object.Commit, full bool) CommitInfo {
	subject, _, _ := strings.Cut(c.Message, "\n")
	ci := CommitInfo{
		Hash: c.Hash.String(), Author: c.Author.Name + " <" + c.Author.Email + ">",
		Date: c.Author.When.Format(time.RFC3339), Subject: subject,
	}
	for _, p := range c.ParentHashes {
		ci.Parents = append(ci.Parents, p.String())
	}
	if full {
		ci.Message = c.Message
	}
	return ci
}

// ShowIn is git_show's input.
type ShowIn struct {
	Rev string `json:"rev,omitempty" jsonschema:"The commit: a branch, tag or commit hash (default HEAD)"`
}

// ShowOut is git_show's output.
type ShowOut struct {
	Commit    CommitInfo `json:"commit"`
	Diff      string     `json:"diff" jsonschema:"The commit's changes against its first parent, unified"`
	Files     []FileStat `json:"files"`
	Truncated bool       `json:"truncated"`
}

const gitShowDesc = `Show one commit of the workspace repository: its metadata, full message and diff against its first parent.

When to use: after git_log, to read what a commit changed.

Parameters:
- rev: a branch, tag or commit hash (default HEAD).

Returns: commit (hash, author, date, subject, message, parents), diff (unified, cut at fs.max_read_bytes), files (path, status, additions, deletions, binary, withheld: a file matching capabilities.secret_files is listed, its contents withheld), truncated.

Errors: not_found (rule git.rev) for an unknown rev or an unborn branch; not_found (rule git.repository) when the workspace is not a repository.

Side effects: none.

Example: {"rev": "HEAD~1"}`

func (s *Set) gitShow() tools.Tool {
	return tools.New("git_show", gitShowDesc,
		tools.Annotations{Title: "Git show", ReadOnly: true, Idempotent: true},
		readMeta,
		func(ctx context.Context, in ShowIn) (ShowOut, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			r, err := s.open()
			if err != nil {
				return ShowOut{}, err
			}
			h, err := r.resolve(in.Rev)
			if errors.Is(err, errUnborn) {
				return ShowOut{}, toolerr.New(toolerr.NotFound, "Commit something first.", "HEAD has no commit yet").WithRule("git.rev")
			}
			if err != nil {
				return ShowOut{}, err
			}
			c, err := r.CommitObject(h)
			if err != nil {
				return ShowOut{}, err
			}
			changes, err := r.commitChanges(ctx, c, s.limits.MaxReadBytes)
			if err != nil {
				return ShowOut{}, err
			}
			p := s.render(changes, s.limits.MaxReadBytes)
			return ShowOut{Commit: info(c, true), Diff: p.Text, Files: orEmpty(p.Files), Truncated: p.Truncated}, nil
		})
}

// commitChanges is what c changes against its first parent (against
// nothing for a root commit).
func (r *repo) commitChanges(ctx context.Context, c *object.Commit, limit int64) ([]fileChange, error) {
	to, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var from *object.Tree
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if from, err = p.Tree(); err != nil {
			return nil, err
		}
	}
	diff, err := object.DiffTreeWithOptions(ctx, from, to, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	out := make([]fileChange, 0, len(diff))
	for _, ch := range diff {
		fc := fileChange{Path: ch.To.Name}
		if fc.Path == "" {
			fc.Path = ch.From.Name
		}
		if ch.From.Name != "" {
			if fc.Old, err = r.entry(ch.From.TreeEntry.Hash, ch.From.TreeEntry.Mode, limit); err != nil {
				return nil, err
			}
		}
		if ch.To.Name != "" {
			if fc.New, err = r.entry(ch.To.TreeEntry.Hash, ch.To.TreeEntry.Mode, limit); err != nil {
				return nil, err
			}
		}
		out = append(out, fc)
	}
	return out, nil
}

// forbiddenRune is a control, format (invisible, bidi) or line/paragraph
// separator character.
func forbiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}
