package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/server"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/upstream"
)

// setUpstreamTools offers the upstream tools listed again after start
// exactly as those listed at start are: the guard learns each new or
// changed definition (its approval mode, limits and the input schema its
// arguments are validated against) and grants the capability of one
// annotated read-only by default, before mcp-go lists it; the tools no
// longer offered (del) are dropped; the output filter learns the names
// offered now. mcp-go then tells every client, over stdio and each HTTP
// session, with notifications/tools/list_changed. An upstream tool runs
// as a task (taskCapable) whenever it was listed.
func (s *Server) setUpstreamTools(add []tools.Tool, del []string) error {
	schemas := make(map[string]json.RawMessage, len(add))
	entries := make([]server.ServerTool, 0, len(add))
	for _, t := range add {
		schemas[t.Tool.Name] = t.Tool.RawInputSchema
		entries = append(entries, server.ServerTool{Tool: t.Tool, Handler: t.Handler})
	}
	// A tool dropped, or listed again without its read-only annotation,
	// loses the default grant it had for being read-only.
	s.guard.RevokeLater(append(slices.Clone(del), notReadOnly(add)...))
	if len(add) > 0 {
		if err := s.guard.SetTools(GuardInfo(add), schemas); err != nil {
			return err
		}
		if err := s.guard.GrantLater(upstreamGrants(add)); err != nil {
			return err
		}
	}
	if len(del) > 0 {
		s.mcp.DeleteTools(del...)
	}
	if len(entries) > 0 {
		s.mcp.AddTools(entries...)
	}
	s.watchOfferedNames()
	return nil
}

// watchOfferedNames has the output filter watch for calls of every tool
// and prompt registered now. The tools' and the prompts' relists each
// call it: under namesMu, the names stored last are the latest.
func (s *Server) watchOfferedNames() {
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	s.guard.SetToolNames(s.offeredNames())
}

// notReadOnly are the names of the upstream tools of toolset not
// annotated read-only.
func notReadOnly(toolset []tools.Tool) []string {
	var out []string
	for _, t := range toolset {
		if t.Meta.Toolset == upstream.Toolset && !upstream.ReadOnly(t.Tool) {
			out = append(out, t.Tool.Name)
		}
	}
	return out
}

// offeredNames are the names of every tool and prompt registered now,
// sorted: what the output filter watches for calls of.
func (s *Server) offeredNames() []string {
	names := slices.Collect(maps.Keys(s.mcp.ListTools()))
	names = append(names, slices.Collect(maps.Keys(s.mcp.ListPrompts()))...)
	slices.Sort(names)
	return names
}
