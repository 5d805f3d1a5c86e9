package guard

// Advertised reports whether a model may see a tool: it is allowed and
// does not require trust (no model may call a requires_trust tool, so none
// is shown one).
func (g *Guard) Advertised(name string) bool {
	return g.Allowed(name) && !g.tool(name).RequiresTrust
}

// matchesAny reports whether name matches one of the tool-name globs.
func matchesAny(globs []string, name string) bool {
	for _, g := range globs {
		if nameMatch(g, name) {
			return true
		}
	}
	return false
}
