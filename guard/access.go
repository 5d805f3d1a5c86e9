package guard

// Access is how far a model's call of a tool gets on the tool alone,
// before any argument is looked at: whether the tool, policy, identity
// and trust checks let it through, and the approval mode it then meets.
// `toolwarden policy diff` compares it between two configs.
type Access struct {
	// Offered is true when the tool, policy, identity and trust checks
	// pass for an untrusted (model) call.
	Offered bool
	// Rule is the rule that refused the tool, or the approval rule.
	Rule string
	// Mode is the approval mode the caller meets (identity rules make it
	// stricter); "" when the tool is not offered.
	Mode ApprovalMode
}

// AccessOf decides a model's call of tool by the caller (identity and
// claims) with the checks Decide runs first, in the same order and code,
// and gives the approval mode narrow would give the call. Arguments,
// capabilities and limits depend on the call and are compared apart.
func (g *Guard) AccessOf(identity string, c Claims, tool string) Access {
	call := Call{Tool: tool, Identity: identity, Claims: c}
	call.layers = layersOf(g.cfg.Identities, call)
	t := g.tool(tool)
	in := newInput(call, t, g.cfg.Policy, g.cfg.Limits)
	if d := in.runThrough(stepTrust); d.Outcome != Allow {
		return Access{Rule: d.Rule}
	}
	rule := t.ApprovalRule
	if rule == "" {
		rule = "approval.default"
	}
	if in.approval != t.mode() {
		rule = "identities.approval"
	}
	return Access{Offered: true, Rule: rule, Mode: in.approval}
}
