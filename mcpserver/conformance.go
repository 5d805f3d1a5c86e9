//go:build conformance

package mcpserver

import "github.com/toolwarden/toolwarden/tools/conformance"

// A build with the conformance tag serves the MCP conformance suite's
// fixtures (e2e's TestConformance); see testProfile.
func init() {
	testProfile.name = conformance.Toolset
	testProfile.tools = conformance.Tools
	testProfile.options = conformance.Options
	testProfile.register = conformance.Register
}
