// Package git implements the git tools on the workspace repository:
// reading its state and history (git_status, git_diff, git_log, git_show)
// and, behind approval, staging and committing (git_add, git_commit).
//
// It is built on go-git, a pure Go implementation: no git binary runs,
// so no hook, filter driver, fsmonitor daemon, credential helper or pager
// that a repository's config or attributes name can run either. A
// repository that asks for any of them is refused for writes (what
// toolwarden would record would not be what git would), and the reads
// say what they do not apply. There is no remote operation and no config
// change: the tools cannot push, fetch or set anything.
//
// The repository must be the workspace root's, and everything it is made
// of must lie inside the workspace: a .git file or symlink pointing
// elsewhere, or object alternates outside, are refused before anything is
// read. Files are opened through go-billy's bound OS filesystem, which
// refuses to follow a symlink out of its base directory.
package git

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
)

// Identity is the author and committer of every commit git_commit
// makes: the model's commits are told apart from a human's at a glance.
var Identity = object.Signature{Name: "toolwarden", Email: "toolwarden@localhost"}

// Set is the git toolset over one workspace.
type Set struct {
	ws     *sandbox.Workspace
	limits configs.FS
	// secrets are capabilities.secret_files: their contents never show in
	// a diff, and git_add does not stage them by a directory.
	secrets []string
	// mu serialises the calls: go-git does not lock the index.
	mu sync.Mutex
}

// New returns the git toolset; limits.MaxReadBytes bounds each call's
// text (a diff, a log). With a nil ws the tools are only defined; Bind
// attaches the workspace before any call.
func New(ws *sandbox.Workspace, limits configs.FS) *Set {
	return &Set{ws: ws, limits: limits}
}

// SkipSecretFiles withholds the contents of the files globs match
// (capabilities.secret_files) from every diff, and keeps git_add from
// staging them as part of a directory.
func (s *Set) SkipSecretFiles(globs []string) *Set {
	s.secrets = globs
	return s
}

// Bind attaches the workspace the tools act on.
func (s *Set) Bind(ws *sandbox.Workspace) { s.ws = ws }

// Tools returns every git tool, read-only ones first.
func (s *Set) Tools() []tools.Tool {
	return []tools.Tool{
		s.gitStatus(), s.gitDiff(), s.gitLog(), s.gitShow(),
		tools.WithPreview(s.gitAdd(), tools.PreviewOf(s.previewAdd)),
		tools.WithPreview(s.gitCommit(), tools.PreviewOf(s.previewCommit)),
	}
}

// The reads see the whole tree and its history: they need fs:read on all
// of it. The writes change only .git (the index, objects, the branch);
// git_add reads the files it stages.
var (
	readMeta   = tools.Meta{Toolset: "git", Capabilities: []string{"fs:read:**"}}
	addMeta    = tools.Meta{Toolset: "git", RequiresApproval: true, Capabilities: []string{"fs:read:{paths}/**", "fs:write:.git/**"}, PathArgs: []string{"paths"}}
	commitMeta = tools.Meta{Toolset: "git", RequiresApproval: true, Capabilities: []string{"fs:write:.git/**"}}
)
