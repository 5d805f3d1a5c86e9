// Package fs implements the workspace file tools: reading, listing,
// searching and (behind the policy) writing files. Every path goes through
// sandbox.CleanPath and the workspace's os.Root, so nothing outside the
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
}

// New returns the file toolset for ws.
func New(ws *sandbox.Workspace, limits Limits) *Set {
	return &Set{ws: ws, limits: limits}
}

// Tools returns every file tool, read-only ones first.
func (s *Set) Tools() []tools.Tool {
	return s.withPreviews([]tools.Tool{
		s.readFile(), s.readMultipleFiles(), s.listDirectory(), s.directoryTree(),
		s.searchFiles(), s.grepFiles(), s.fileInfo(),
		s.writeFile(), s.editFile(), s.createDirectory(), s.moveFile(), s.deleteFile(),
	})
}

var readMeta = tools.Meta{Toolset: "fs", Capabilities: []string{"fs:read:**"}, PathArgs: []string{"path"}}

func writeMeta(highRisk bool, pathArgs ...string) tools.Meta {
	return tools.Meta{Toolset: "fs", Capabilities: []string{"fs:write:**"}, RequiresApproval: true,
		HighRisk: highRisk, PathArgs: pathArgs}
}

// orRoot returns p, or "." when it is empty.
func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}
