package guard

import (
	"fmt"
	"slices"

	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Claims are what identity rules know of a caller besides its identity
// name: an OAuth access token's subject, client, groups and scopes. A
// static token's caller has none.
type Claims struct {
	Subject, ClientID string
	Groups, Scopes    []string
}

// IdentityMatch selects callers. Every field that is set must match
// (one of its values); a match that sets no field matches no one, so a
// rule left empty by mistake narrows nobody's policy rather than all.
type IdentityMatch struct {
	Identities, Subjects, ClientIDs, Groups, Scopes []string
}

// IdentityLayer is one identities rule: an extra policy layer for the
// callers it matches. It only ever narrows the base policy: a tool must
// pass both allow lists, a revoked capability is denied whatever is
// granted, an approval mode can only be made stricter and a limit lower.
type IdentityLayer struct {
	Name  string
	Match IdentityMatch
	Allow []string // empty: no extra allowlist
	Deny  []string
	// Grant, when set, is what these callers may use at most: a need must
	// be covered here as well as by the base's grants.
	Grant    []capability.Capability
	Revoke   []capability.Capability
	Approval map[string]ApprovalMode
	// Limits are lower bounds for the counted limits (zero: the base's).
	Limits LayerLimits
}

// LayerLimits are the counted limits an identity rule may lower; they
// count over the same window and counters as the base limits.
type LayerLimits struct {
	MaxCalls                   int
	MaxOutputBytes, MaxBytesIn int64
	Budget                     int64
}

func (m IdentityMatch) set() bool {
	return len(m.Identities)+len(m.Subjects)+len(m.ClientIDs)+len(m.Groups)+len(m.Scopes) > 0
}

// matches reports whether the caller (identity and claims) is selected.
func (m IdentityMatch) matches(identity string, c Claims) bool {
	one := func(want []string, have ...string) bool {
		return len(want) == 0 || slices.ContainsFunc(have, func(h string) bool { return h != "" && slices.Contains(want, h) })
	}
	return m.set() && one(m.Identities, identity) && one(m.Subjects, c.Subject) &&
		one(m.ClientIDs, c.ClientID) && one(m.Groups, c.Groups...) && one(m.Scopes, c.Scopes...)
}

// layersOf returns the identity rules that apply to call.
func layersOf(all []IdentityLayer, call Call) []*IdentityLayer {
	var out []*IdentityLayer
	for i := range all {
		if all[i].Match.matches(call.Identity, call.Claims) {
			out = append(out, &all[i])
		}
	}
	return out
}

// checkIdentity runs after the base policy allowed the tool: every
// matching identity rule's deny and allow lists must let it through too,
// and an approval mode of deny refuses it here.
func checkIdentity(in *input) Decision {
	tool := in.call.Tool
	names := make([]string, 0, len(in.layers))
	for _, l := range in.layers {
		rule := "identities[" + l.Name + "]"
		if g, ok := firstMatch(l.Deny, tool); ok {
			return identityDeny(fmt.Sprintf("%s.deny:%q", rule, g), tool, l.Name)
		}
		if _, ok := firstMatch(l.Allow, tool); len(l.Allow) > 0 && !ok {
			return identityDeny(rule+".allow:not_allowlisted", tool, l.Name)
		}
		if mode, g := layerMode(l, tool); mode == ApprovalDeny {
			return identityDeny(fmt.Sprintf("%s.approval:%q=deny", rule, g), tool, l.Name)
		}
		names = append(names, l.Name)
	}
	d := pass("identities.allowed")
	if in.trace {
		d.note = fmt.Sprintf("rules %v apply", names)
	}
	return d
}

// layerGrantHint is the hint of a need an identity rule's grant list
// does not cover.
const layerGrantHint = "Stay within the paths and resources this identity was granted; the operator grants them in the identities rule's grant."

// layerMissing returns the first layer with a grant list that does not
// cover need.
func layerMissing(layers []*IdentityLayer, need capability.Capability) *IdentityLayer {
	for _, l := range layers {
		if len(l.Grant) > 0 && firstCovering(l.Grant, nil, need, capability.Covers) < 0 {
			return l
		}
	}
	return nil
}

func identityDeny(rule, tool, layer string) Decision {
	return deny(rule, toolerr.New(toolerr.DeniedNotAllowed,
		"Use one of the tools listed by tools/list; this identity's policy is narrower than the server's.",
		"tool %q is not allowed for this identity (identities rule %q, %s)", tool, layer, rule))
}

func firstMatch(globs []string, name string) (string, bool) {
	for _, g := range globs {
		if nameMatch(g, name) {
			return g, true
		}
	}
	return "", false
}

// layerMode is the strictest approval mode l sets for tool, and its glob.
func layerMode(l *IdentityLayer, tool string) (ApprovalMode, string) {
	mode, glob := ApprovalMode(""), ""
	for g, m := range l.Approval {
		if nameMatch(g, tool) && (mode == "" || m.rank() > mode.rank() || (m == mode && g < glob)) {
			mode, glob = m, g
		}
	}
	return mode, glob
}

// narrow returns the base policy, limits and approval mode of tool as
// the layers narrow them for one call.
func narrow(p Policy, l Limits, mode ApprovalMode, tool string, layers []*IdentityLayer) (Policy, Limits, ApprovalMode) {
	if len(layers) == 0 {
		return p, l, mode
	}
	p.Revoked = slices.Clone(p.Revoked)
	for _, layer := range layers {
		p.Revoked = append(p.Revoked, layer.Revoke...)
		l.MaxCalls = lower(l.MaxCalls, layer.Limits.MaxCalls)
		l.MaxOutputBytes = lower(l.MaxOutputBytes, layer.Limits.MaxOutputBytes)
		l.MaxBytesIn = lower(l.MaxBytesIn, layer.Limits.MaxBytesIn)
		l.Budget = lower(l.Budget, layer.Limits.Budget)
		if m, _ := layerMode(layer, tool); m != "" && m.rank() > mode.rank() {
			mode = m
		}
	}
	p.revokedPrefix = prefixesOf(p.Revoked)
	return p, l, mode
}

// lower is the lower of a bound and a layer's (zero: no bound).
func lower[T int | int64](base, layer T) T {
	switch {
	case layer <= 0:
		return base
	case base <= 0:
		return layer
	}
	return min(base, layer)
}

// AdvertisedTo reports whether a caller may see a tool in tools/list:
// Advertised, and let through by every identities rule that applies to it.
func (g *Guard) AdvertisedTo(identity string, c Claims, name string) bool {
	if !g.Advertised(name) {
		return false
	}
	call := Call{Tool: name, Identity: identity, Claims: c}
	layers := layersOf(g.cfg.Identities, call)
	return len(layers) == 0 || checkIdentity(&input{call: call, layers: layers}).Outcome == Allow
}
