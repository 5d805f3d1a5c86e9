package mcpserver

import (
	"context"
	"io"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/tools"
)

// testProfile is what a build with the conformance tag adds
// (conformance.go): the MCP conformance suite's fixture tools, behind the
// guard like every tool, and its prompts, resources, logging and
// completions. A normal build leaves it empty, so its catalog never holds
// them.
var testProfile struct {
	name     string
	tools    func() []tools.Tool
	options  func() []server.ServerOption
	register func(*server.MCPServer)
}

// profileToolsets is the test profile's toolset, if the build has one.
func profileToolsets() []toolset {
	if testProfile.tools == nil {
		return nil
	}
	set := fixedSet(testProfile.tools())
	return []toolset{{name: testProfile.name, set: set, open: func(context.Context, backendEnv) (io.Closer, error) { return nil, nil }}}
}

// fixedSet is a toolset whose tools need no backend.
type fixedSet []tools.Tool

func (f fixedSet) Tools() []tools.Tool { return f }
