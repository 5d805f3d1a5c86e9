package git

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	gogit "github.com/go-git/go-git/v5"
	"github.com/toolwarden/toolwarden/internal/toolerr"
	"github.com/toolwarden/toolwarden/tools"
)

// AddIn is git_add's input.
type AddIn struct {
	Paths []string `json:"paths" jsonschema:"Workspace-relative files or directories to stage; \".\" is the whole tree"`
}

// AddOut is git_add's output.
type AddOut struct {
	Staged  []FileStat `json:"staged" jsonschema:"The files staged, with what changed"`
	Skipped []string   `json:"skipped,omitempty" jsonschema:"Files under a named directory that match capabilities.secret_files: never staged that way"`
}

const gitAddDesc = `Stage work-tree changes (new, modified and deleted files) in the workspace repository's index.

When to use: after editing files, before git_commit. Check git_status or git_diff first.

Parameters:
- paths (required): workspace-relative files or directories; "." stages every change. Ignored files under a directory are not staged.

Returns: staged (path, status, additions, deletions per file), skipped (secret files under a directory, never staged that way).

Errors: denied.not_allowed (rules git.hooks, git.filters, git.fsmonitor, git.include, git.worktree) when the repository asks for hooks, filters, fsmonitor or included config, which toolwarden never runs; conflict (git.detached_head, git.in_progress, git.conflicted); invalid_argument (git.nothing_to_stage) when nothing under paths changed; invalid_argument (git.path) for a path inside .git; invalid_argument.path_outside_workspace.

Side effects: asks the human, showing the exact diff to be staged, then writes the index. No hook runs.

Example: {"paths": ["src/main.go", "docs"]}`

func (s *Set) gitAdd() tools.Tool {
	return tools.New("git_add", gitAddDesc,
		tools.Annotations{Title: "Git add", Idempotent: true},
		addMeta,
		func(ctx context.Context, in AddIn) (AddOut, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			r, plan, err := s.planAdd(in)
			if err != nil {
				return AddOut{}, err
			}
			for _, c := range plan.changes {
				if err := ctx.Err(); err != nil {
					return AddOut{}, err
				}
				if _, err := r.wt.Add(c.Path); err != nil {
					return AddOut{}, fmt.Errorf("staging %s: %w", c.Path, err)
				}
			}
			return AddOut{Staged: plan.patch.Files, Skipped: plan.skipped}, nil
		})
}

// addPlan is what git_add would stage.
type addPlan struct {
	branch  string
	changes []fileChange
	patch   patch
	skipped []string
}

// planAdd checks a git_add call and works out what it stages: the
// changes under its paths, less the secret files a directory holds (a
// secret file named itself is denied by the guard's capability check).
func (s *Set) planAdd(in AddIn) (*repo, addPlan, error) {
	if len(in.Paths) == 0 {
		return nil, addPlan{}, toolerr.New(toolerr.InvalidArgument, `Name files or directories; "." is the whole tree.`, "paths is empty").WithRule("git.path")
	}
	paths, err := cleanPaths(in.Paths)
	if err != nil {
		return nil, addPlan{}, err
	}
	r, err := s.open()
	if err != nil {
		return nil, addPlan{}, err
	}
	h, err := r.writable()
	if err != nil {
		return nil, addPlan{}, err
	}
	all, err := r.unstaged(paths, true, s.limits.MaxReadBytes)
	if err != nil {
		return nil, addPlan{}, err
	}
	plan := addPlan{branch: h.Branch}
	for _, c := range all {
		if s.secret(c.Path) && !named(c.Path, paths) {
			plan.skipped = append(plan.skipped, c.Path)
			continue
		}
		plan.changes = append(plan.changes, c)
	}
	if len(plan.changes) == 0 {
		return nil, addPlan{}, toolerr.New(toolerr.InvalidArgument, "git_status lists what changed.",
			"nothing under %s differs from the index", strings.Join(quoteAll(paths), ", ")).WithRule("git.nothing_to_stage")
	}
	plan.patch = s.render(plan.changes, s.limits.MaxReadBytes)
	return r, plan, nil
}

func named(p string, paths []string) bool {
	for _, q := range paths {
		if p == q {
			return true
		}
	}
	return false
}

func quoteAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = toolerr.Quote(p)
	}
	return out
}

// previewAdd shows exactly what git_add stages: the diff of every file
// against the index.
func (s *Set) previewAdd(_ context.Context, in AddIn) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, plan, err := s.planAdd(in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Stage %d file(s) on branch %s:\n%s\n", len(plan.changes), plan.branch, statLines(plan.patch.Files))
	if len(plan.skipped) > 0 {
		fmt.Fprintf(&b, "Not staged (capabilities.secret_files): %s\n", strings.Join(plan.skipped, ", "))
	}
	b.WriteString("\n" + plan.patch.Text)
	if plan.patch.Truncated {
		b.WriteString("\n[diff cut at fs.max_read_bytes; every file staged is listed above]\n")
	}
	return b.String(), nil
}

// statLines renders files as git diff --stat does, one per line.
func statLines(files []FileStat) string {
	var b strings.Builder
	add, del := 0, 0
	for _, f := range files {
		switch {
		case f.Withheld:
			fmt.Fprintf(&b, "  %-8s %s (contents withheld: capabilities.secret_files)\n", f.Status, f.Path)
		case f.Binary:
			fmt.Fprintf(&b, "  %-8s %s (binary)\n", f.Status, f.Path)
		default:
			fmt.Fprintf(&b, "  %-8s %s +%d -%d\n", f.Status, f.Path, f.Additions, f.Deletions)
		}
		add, del = add+f.Additions, del+f.Deletions
	}
	fmt.Fprintf(&b, "  %d file(s) changed, %d insertion(s), %d deletion(s)", len(files), add, del)
	return b.String()
}

// maxMessage bounds a commit message, in characters.
const maxMessage = 10000

// CommitIn is git_commit's input.
type CommitIn struct {
	Message string `json:"message" jsonschema:"The commit message: a subject line, then optionally a blank line and a body"`
}

// CommitOut is git_commit's output.
type CommitOut struct {
	Hash   string     `json:"hash"`
	Branch string     `json:"branch"`
	Author string     `json:"author"`
	Files  []FileStat `json:"files"`
}

const gitCommitDesc = `Record the staged changes as a new commit on the current branch of the workspace repository.

When to use: after git_add, once git_diff with staged true shows what you mean to commit.

Parameters:
- message (required): the commit message, a subject line and optionally a blank line and a body; plain text, at most 10000 characters, no control or invisible characters other than newline and tab.

Returns: hash, branch, author (always "toolwarden <toolwarden@localhost>", the committer too), files (path, status, additions, deletions).

Errors: invalid_argument.text (git.message) for a bad message; invalid_argument (git.nothing_staged) when the index equals HEAD; denied.not_allowed (git.hooks, git.filters, git.fsmonitor, git.include, git.worktree) when the repository asks for what toolwarden never runs; conflict (git.detached_head, git.in_progress, git.conflicted).

Side effects: asks the human, showing the message, author, files and diff stat, then writes the commit and moves the branch. No hook runs, nothing is signed or pushed.

Example: {"message": "fs: refuse empty paths\n\nAn empty path named the workspace root."}`

func (s *Set) gitCommit() tools.Tool {
	return tools.New("git_commit", gitCommitDesc,
		tools.Annotations{Title: "Git commit"},
		commitMeta,
		func(ctx context.Context, in CommitIn) (CommitOut, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			r, plan, err := s.planCommit(in)
			if err != nil {
				return CommitOut{}, err
			}
			if err := ctx.Err(); err != nil {
				return CommitOut{}, err
			}
			sig := Identity
			sig.When = time.Now()
			h, err := r.wt.Commit(in.Message, &gogit.CommitOptions{Author: &sig, Committer: &sig})
			if errors.Is(err, gogit.ErrEmptyCommit) {
				return CommitOut{}, nothingStaged()
			}
			if err != nil {
				return CommitOut{}, err
			}
			return CommitOut{Hash: h.String(), Branch: plan.branch, Author: author(), Files: plan.patch.Files}, nil
		})
}

func author() string { return Identity.Name + " <" + Identity.Email + ">" }

func nothingStaged() error {
	return toolerr.New(toolerr.InvalidArgument, "Stage changes with git_add first.",
		"nothing is staged: the index equals HEAD").WithRule("git.nothing_staged")
}

// planCommit checks a git_commit call and what it records.
func (s *Set) planCommit(in CommitIn) (*repo, addPlan, error) {
	if err := checkMessage(in.Message); err != nil {
		return nil, addPlan{}, err
	}
	r, err := s.open()
	if err != nil {
		return nil, addPlan{}, err
	}
	h, err := r.writable()
	if err != nil {
		return nil, addPlan{}, err
	}
	changes, err := r.staged(nil, s.limits.MaxReadBytes)
	if err != nil {
		return nil, addPlan{}, err
	}
	if len(changes) == 0 {
		return nil, addPlan{}, nothingStaged()
	}
	return r, addPlan{branch: h.Branch, changes: changes, patch: s.render(changes, s.limits.MaxReadBytes)}, nil
}

// previewCommit shows the commit to be made: branch, author, message and
// the diff stat of what it records.
func (s *Set) previewCommit(_ context.Context, in CommitIn) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, plan, err := s.planCommit(in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Commit on branch %s as %s (author and committer):\n\n", plan.branch, author())
	for _, line := range strings.Split(strings.TrimRight(in.Message, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	fmt.Fprintf(&b, "\n%s\n", statLines(plan.patch.Files))
	return b.String(), nil
}

// checkMessage refuses a commit message that is empty, too long, not
// UTF-8, or holds a control or invisible character other than newline
// and tab: what the human approves must be what the log shows.
func checkMessage(m string) error {
	bad := func(format string, args ...any) error {
		return toolerr.New(toolerr.InvalidText, "Write a plain-text message: a subject line, then optionally a blank line and a body.",
			"message "+format, args...).WithRule("git.message")
	}
	switch n := utf8.RuneCountInString(m); {
	case !utf8.ValidString(m):
		return bad("is not valid UTF-8")
	case strings.TrimSpace(m) == "":
		return bad("is empty")
	case n > maxMessage:
		return bad("is %d characters long; the limit is %d", n, maxMessage)
	}
	for _, r := range m {
		if r != '\n' && r != '\t' && forbiddenRune(r) {
			return bad("contains the control or invisible character %U", r)
		}
	}
	return nil
}
