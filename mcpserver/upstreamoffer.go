package mcpserver

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/tools"
)

// setUpstreamTools offers the upstream tools listed again after start:
// the guard learns each new or changed definition (its approval mode,
// limits and the input schema its arguments are validated against) before
// mcp-go lists it, and the tools no longer offered (del) are dropped.
// mcp-go then tells every client, over stdio and each HTTP session, with
// notifications/tools/list_changed. A tool added after start gets no
// default capability (those of read-only upstream tools are granted at
// start): it runs once capabilities.grant names it.
func (s *Server) setUpstreamTools(add []tools.Tool, del []string) error {
	schemas := make(map[string]json.RawMessage, len(add))
	entries := make([]server.ServerTool, 0, len(add))
	for _, t := range add {
		schemas[t.Tool.Name] = t.Tool.RawInputSchema
		entries = append(entries, server.ServerTool{Tool: t.Tool, Handler: t.Handler})
	}
	if len(add) > 0 {
		if err := s.guard.SetTools(GuardInfo(add), schemas); err != nil {
			return err
		}
	}
	if len(del) > 0 {
		s.mcp.DeleteTools(del...)
	}
	if len(entries) > 0 {
		s.mcp.AddTools(entries...)
	}
	return nil
}
