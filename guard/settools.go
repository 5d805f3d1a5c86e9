package guard

import (
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// tool is the known tool name, nil for an unknown one.
func (g *Guard) tool(name string) *ToolInfo {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.tools[name]
}

// appliedTo are the per-tool limits of the known tool name.
func (g *Guard) appliedTo(name string) []ToolLimits {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.applied[name]
}

// SetTools makes tools known, or known anew, while the guard serves: the
// tools an upstream lists again after a restart or its
// notifications/tools/list_changed. schemas holds each one's input
// schema, which its arguments are validated against from now on. Each
// tool gets its approval mode (approval.modes), per-tool limits and
// require_trust as at start; a call already admitted keeps the
// definition it was admitted under. Nothing is set when a schema does
// not compile.
func (g *Guard) SetTools(tools []ToolInfo, schemas map[string]json.RawMessage) error {
	compiled := make([]*jsonschema.Schema, len(tools))
	for i, t := range tools {
		s, err := compileSchema(t.Name, schemas[t.Name])
		if err != nil {
			return err
		}
		g.validator.compiled.Add(1)
		compiled[i] = s
	}
	for i := range tools {
		t := &tools[i]
		g.validator.set(t.Name, compiled[i], schemas[t.Name], t.PathArgs)
		t.RequiresTrust = t.RequiresTrust || matchesAny(g.cfg.RequireTrust, t.Name)
		g.mu.Lock()
		t.Approval, t.ApprovalRule = ResolveApproval(t.Name, t.RequiresApproval, g.approvalRules)
		g.tools[t.Name] = t
		g.applied[t.Name] = g.cfg.Limits.applies(t.Name)
		g.mu.Unlock()
	}
	return nil
}
