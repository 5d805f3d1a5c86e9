package guard

import (
	"encoding/json"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwarden/toolwarden/guard/outfilter"
	"github.com/toolwarden/toolwarden/internal/capability"
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

// laterGrants are capabilities granted by default to tools made known
// while the guard serves: those of an upstream's read-only tools and its
// prompts, which were granted at start had they been listed then.
type laterGrants struct {
	mu   sync.RWMutex
	caps map[string]bool
}

// covers reports whether need is one of the later grants (each an exact
// capability, no glob). A nil set (a Policy built by hand) grants nothing.
func (l *laterGrants) covers(need capability.Capability) bool {
	if l == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.caps[need.String()]
}

// GrantLater grants caps by default from now on, as capabilities granted
// at start by default are: for the tools SetTools makes known after start
// that would have had them at start (an upstream tool annotated
// read-only). capabilities.deny still revokes them, and identities rules
// still narrow them; a capability that does not parse is an error and
// nothing is granted.
func (g *Guard) GrantLater(caps []string) error {
	parsed, err := capability.ParseList(caps)
	if err != nil {
		return err
	}
	l := g.cfg.Policy.later
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.caps == nil {
		l.caps = map[string]bool{}
	}
	for _, c := range parsed {
		l.caps[c.String()] = true
	}
	return nil
}

// RevokeLater withdraws the default grants GrantLater made for the named
// tools: a tool the upstream no longer lists, or lists again without its
// read-only annotation, keeps no default it had for being read-only.
// Grants of the start and capabilities.grant are not touched.
func (g *Guard) RevokeLater(tools []string) {
	l := g.cfg.Policy.later
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, name := range tools {
		t := g.tool(name)
		if t == nil {
			continue
		}
		for _, c := range t.Capabilities {
			if parsed, err := capability.Parse(c); err == nil {
				delete(l.caps, parsed.String())
			}
		}
	}
}

// SetToolNames gives the output filter and the argument scan's the names
// of every tool offered now (names): text asking to call one of them is
// flagged, for the tools made known after start as for those known at
// start, whose names the filters keep watching.
func (g *Guard) SetToolNames(names []string) {
	out := g.cfg.OutputFilter.WithMoreToolNames(names)
	g.filter.Store(out)
	switch a := g.cfg.Arguments.Filter; {
	case a == nil: // argument scanning is off
	case a == g.cfg.OutputFilter:
		g.argFilter.Store(out) // shared, as at start: compiled once
	default:
		g.argFilter.Store(a.WithMoreToolNames(names))
	}
}

// argumentFilter is the filter arguments are scanned with: the
// configured one or the one SetToolNames made; nil when scanning is off.
func (g *Guard) argumentFilter() *outfilter.Filter {
	if f := g.argFilter.Load(); f != nil {
		return f
	}
	return g.cfg.Arguments.Filter
}

// outputFilter is the filter results go through: the configured one, the
// one SetToolNames made, or the secure default.
func (g *Guard) outputFilter() *outfilter.Filter {
	if f := g.filter.Load(); f != nil {
		return f
	}
	if g.cfg.OutputFilter != nil {
		return g.cfg.OutputFilter
	}
	return defaultFilter()
}
