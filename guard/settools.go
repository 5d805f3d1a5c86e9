package guard

import "encoding/json"

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
	for _, t := range tools {
		if _, err := compileSchema(t.Name, schemas[t.Name]); err != nil {
			return err
		}
	}
	for i := range tools {
		t := &tools[i]
		if err := g.validator.set(t.Name, schemas[t.Name], t.PathArgs); err != nil {
			return err
		}
		t.RequiresTrust = t.RequiresTrust || matchesAny(g.cfg.RequireTrust, t.Name)
		g.mu.Lock()
		t.Approval, t.ApprovalRule = ResolveApproval(t.Name, t.RequiresApproval, g.approvalRules)
		g.tools[t.Name] = t
		g.applied[t.Name] = g.cfg.Limits.applies(t.Name)
		g.mu.Unlock()
	}
	return nil
}
