// Package conformance holds the fixture tools, prompts and resources the
// official MCP conformance suite (npm @modelcontextprotocol/conformance)
// calls by name, as its reference "everything" server defines them. It is
// compiled only with the build tag conformance (e2e's TestConformance
// builds such a binary): a normal build's catalog never contains them.
package conformance
