package mcpserver

import (
	"fmt"
	"slices"
	"sort"

	"github.com/toolwarden/toolwarden/audit"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/tools"
	"github.com/toolwarden/toolwarden/tools/declared"
)

// Change is one difference policy diff found: what (Kind, Item) for
// whom (Caller, empty when it is not per caller), as OLD and NEW have it,
// and the rule of NEW that decides it.
type Change struct {
	Kind   string `json:"kind"` // tool, capability, limit, output_filter, secret_files, exec, http, metrics, upstream
	Caller string `json:"caller,omitempty"`
	Item   string `json:"item"`
	Old    string `json:"old"`
	New    string `json:"new"`
	Rule   string `json:"rule,omitempty"`
}

// PolicyDiff is what NEW allows that OLD did not (Widenings) and what it
// no longer allows (Narrowings), over every caller and tool compared.
type PolicyDiff struct {
	Old        string   `json:"old"`
	New        string   `json:"new"`
	Callers    []string `json:"callers"`
	Tools      int      `json:"tools"`
	Widenings  []Change `json:"widenings"`
	Narrowings []Change `json:"narrowings"`
	Notes      []string `json:"notes"`
}

// diffNotes say what the diff cannot see from the configs alone.
var diffNotes = []string{
	"upstream tools are listed only once connected: each upstream is compared by its config (target, sandbox, accept_flagged, pin mode) and the policy.allow globs that can name its tools (<upstream>__*)",
	"network hosts: the egress allow lists (exec.network, each cli tool's network) are compared host by host; net:connect grants as capabilities, declared http tools by their tool entries",
	"writes to the config file and audit log are denied by the server whatever the config says; that denial is not compared",
}

// diffPolicy compares two configs: which tools each caller is offered and
// under which approval mode, decided by the guard's own checks
// (guard.AccessOf) over every tool either config defines, then the
// capability grants, limits and the switches that widen the server.
func diffPolicy(oldCfg, newCfg configs.Config) (PolicyDiff, error) {
	d := PolicyDiff{Notes: diffNotes}
	og, oldNames, err := accessGuard(oldCfg)
	if err != nil {
		return d, fmt.Errorf("OLD: %w", err)
	}
	ng, newNames, err := accessGuard(newCfg)
	if err != nil {
		return d, fmt.Errorf("NEW: %w", err)
	}
	names := slices.Sorted(slices.Values(union(oldNames, newNames)))
	d.Tools = len(names)
	for _, c := range diffCallers(oldCfg, newCfg) {
		d.Callers = append(d.Callers, c.label)
		for _, tool := range names {
			a, b := og.AccessOf(c.identity, c.claims, tool), ng.AccessOf(c.identity, c.claims, tool)
			d.add(accessRank(a), accessRank(b), Change{Kind: "tool", Caller: c.label, Item: tool,
				Old: accessString(a), New: accessString(b), Rule: b.Rule})
		}
	}
	d.diffCapabilities(oldCfg, newCfg)
	d.diffLimits(oldCfg, newCfg)
	d.diffSwitches(oldCfg, newCfg)
	d.diffUpstreams(oldCfg, newCfg)
	return d, nil
}

// add files c as a widening when rank grows from old to new, as a
// narrowing when it falls.
func (d *PolicyDiff) add(old, new int, c Change) {
	switch {
	case new > old:
		d.Widenings = append(d.Widenings, c)
	case new < old:
		d.Narrowings = append(d.Narrowings, c)
	}
}

// accessGuard builds the guard a server of cfg would build, over every
// tool cfg defines (the catalog and the declared tools), whichever
// backends this machine could open, and the names of those tools.
func accessGuard(cfg configs.Config) (*guard.Guard, []string, error) {
	all := definedTools(cfg)
	g, err := newGuard(cfg, all, audit.Discard{}, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := g.ApplyApprovalModes(cfg.Approval.Modes); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(all))
	for _, t := range all {
		names = append(names, t.Tool.Name)
	}
	return g, names, nil
}

// definedTools is the catalog of cfg and its declared tools, defined
// from the config alone: nothing is opened, probed or called.
func definedTools(cfg configs.Config) []tools.Tool {
	all := Catalog(cfg)
	h := declared.HTTP{Getenv: cfg.Sources().Getenv, Secret: cfg.Sources().Secret}
	c := declared.CLI{Limits: cfg.Exec.Limits}
	for _, t := range cfg.Tools {
		if t.Type == configs.ToolCLI {
			all = append(all, c.Tool(t))
		} else {
			all = append(all, h.Tool(t))
		}
	}
	return all
}

// accessRank orders what a model may do with a tool: nothing, ask a
// human each call, or run it.
func accessRank(a guard.Access) int {
	switch {
	case !a.Offered || a.Mode == guard.ApprovalDeny:
		return 0
	case a.Mode == guard.ApprovalElicit:
		return 1
	}
	return 2
}

func accessString(a guard.Access) string {
	if !a.Offered {
		return "not offered"
	}
	return "offered, approval " + string(a.Mode)
}

// caller is one caller the diff decides for.
type caller struct {
	label, identity string
	claims          guard.Claims
}

// diffCallers are the local client, every named static token of either
// config, and for each identities rule of either a caller it matches
// (the first value of each field its match sets; NEW's rule when both
// have one of that name).
func diffCallers(oldCfg, newCfg configs.Config) []caller {
	out := []caller{{label: LocalIdentity, identity: LocalIdentity}}
	seen := map[string]bool{LocalIdentity: true}
	for _, cfg := range []configs.Config{newCfg, oldCfg} {
		for _, id := range cfg.HTTP.Identities {
			if !seen[id.Name] {
				seen[id.Name] = true
				out = append(out, caller{label: id.Name, identity: id.Name})
			}
		}
	}
	for _, cfg := range []configs.Config{newCfg, oldCfg} {
		for _, r := range cfg.Identities {
			label := "identities[" + r.Name + "]"
			if !seen[label] {
				seen[label] = true
				out = append(out, ruleCaller(label, r.Match))
			}
		}
	}
	return out
}

func ruleCaller(label string, m configs.IdentityMatch) caller {
	first := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[0]
	}
	c := caller{label: label, identity: first(m.Identities)}
	if c.identity == "" {
		c.identity = label
	}
	c.claims = guard.Claims{Subject: first(m.Subjects), ClientID: first(m.ClientIDs)}
	if len(m.Groups) > 0 {
		c.claims.Groups = m.Groups[:1]
	}
	if len(m.Scopes) > 0 {
		c.claims.Scopes = m.Scopes[:1]
	}
	return c
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// added is what b has and a does not, sorted.
func added(a, b []string) []string {
	var out []string
	for _, s := range b {
		if !slices.Contains(a, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
