// Package fs implements the workspace file tools: reading, listing,
// searching and (behind the policy) writing files. Every path goes through
// workspacepath.Clean and the workspace's os.Root, so nothing outside the
// workspace is read or written.
package fs

import (
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/sandbox"
	"github.com/toolwarden/toolwarden/tools"
)

// Limits bound what one call may read, write or list; they are the
// config's fs section.
type Limits = configs.FS

// Set is the file toolset over one workspace.
type Set struct {
	ws     *sandbox.Workspace
	limits Limits
	// secrets are the path globs of capabilities.secret_files, whose
	// contents grep_files does not read (SkipSecretFiles).
	secrets []string
}

// New returns the file toolset for ws. With a nil ws the tools are only
// defined (the catalog lists them without opening anything); Bind attaches
// the workspace before any call.
func New(ws *sandbox.Workspace, limits Limits) *Set {
	return &Set{ws: ws, limits: limits}
}

// SkipSecretFiles makes the walks that read file contents (grep_files)
// skip the files globs match (capabilities.secret_files): the guard denies
// a call on such a path, but a walk over a tree cannot name every file.
func (s *Set) SkipSecretFiles(globs []string) *Set {
	s.secrets = globs
	return s
}

// Bind attaches the workspace the tools' handlers and previews act on. It
// is called once, before the server serves.
func (s *Set) Bind(ws *sandbox.Workspace) { s.ws = ws }

// Tools returns every file tool, read-only ones first.
func (s *Set) Tools() []tools.Tool {
	return s.withPreviews([]tools.Tool{
		s.readFile(), s.readMultipleFiles(), s.listDirectory(), s.directoryTree(),
		s.searchFiles(), s.grepFiles(), s.fileInfo(),
		s.writeFile(), s.editFile(), s.createDirectory(), s.moveFile(), s.deleteFile(),
	})
}

// The fs tools need fs:read or fs:write on the very paths of each call:
// "{path}" is filled from the argument, "{path}/**" is the subtree a walk
// reads.
var (
	readMeta = tools.Meta{Toolset: "fs", Capabilities: []string{"fs:read:{path}"}, PathArgs: []string{"path"}}
	treeMeta = tools.Meta{Toolset: "fs", Capabilities: []string{"fs:read:{path}/**"}, PathArgs: []string{"path"}}
)

// writeMeta needs fs:write on every path argument.
func writeMeta(highRisk bool, pathArgs ...string) tools.Meta {
	m := tools.Meta{Toolset: "fs", RequiresApproval: true, HighRisk: highRisk, PathArgs: pathArgs}
	for _, a := range pathArgs {
		m.Capabilities = append(m.Capabilities, "fs:write:{"+a+"}")
	}
	return m
}

// reading adds fs:read needs to a write that also reads: edit_file reads
// the old text (its diff and whether old_text matches tell what the file
// holds), move_file carries the source's content to where it may be read.
func reading(m tools.Meta, needs ...string) tools.Meta {
	m.Capabilities = append(m.Capabilities, needs...)
	return m
}

// subtree widens m's needs to whole subtrees, for a call that may act on
// a directory and everything in it (move_file).
func subtree(m tools.Meta) tools.Meta {
	for i := range m.Capabilities {
		m.Capabilities[i] += "/**"
	}
	return m
}

// orRoot returns p, or "." when it is empty.
func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}
