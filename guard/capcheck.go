package guard

import (
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// checkCapabilities denies a call that needs a capability the policy
// revokes or does not grant; the denial names the capability.
func checkCapabilities(in *input) Decision {
	needs, err := in.call.capNeeds(in.tool)
	if err != nil {
		return deny(err.Rule, err)
	}
	p := in.policy
	needs = p.throughLinks(needs)
	for _, n := range needs {
		if g, ok := p.secretGlob(n); ok {
			rule := fmt.Sprintf("capabilities.secret_files:%q", g)
			return capDeny(rule, n, secretHint, "tool %q needs %s, a file likely to hold credentials (rule %s)", in.call.Tool, n, rule)
		}
		if i := firstCovering(p.Revoked, p.revokedPrefix, n, capability.Denies); i >= 0 {
			rule := fmt.Sprintf("capabilities.deny:%q", p.Revoked[i].String())
			return capDeny(rule, n, deniedHint, "tool %q needs %s, which the policy denies (rule %s)", in.call.Tool, n, rule)
		}
		if firstCovering(p.Grants, p.grantPrefix, n, capability.Covers) < 0 && !p.later.covers(n) {
			return capDeny("capabilities.missing", n, missingHint, "tool %q needs the capability %s, which the policy does not grant", in.call.Tool, n)
		}
		if l := layerMissing(in.layers, n); l != nil {
			rule := "identities[" + l.Name + "].grant"
			return capDeny(rule, n, layerGrantHint, "tool %q needs %s, which identities rule %q does not grant this identity (rule %s)", in.call.Tool, n, l.Name, rule)
		}
	}
	if len(needs) == 0 {
		return pass("capabilities.none_needed")
	}
	d := pass("capabilities.granted")
	if in.trace {
		d.note = "needs " + joinCaps(needs)
	}
	return d
}

// throughLinks adds to needs, for every fs need on a path that leads
// elsewhere through a symlink, the same need on the place it leads to:
// the tools follow links that stay in the workspace, so a denial of the
// target applies and the grants must cover it too.
func (p Policy) throughLinks(needs []capability.Capability) []capability.Capability {
	if p.resolve == nil {
		return needs
	}
	out := needs
	var seen resolved
	for _, n := range needs {
		if n.Resource != "fs" {
			continue
		}
		path, sub := n.Scope, ""
		if r, ok := strings.CutSuffix(path, "/**"); ok {
			path, sub = r, "/**"
		}
		if capability.HasGlob(path) {
			continue
		}
		real, ok := seen.resolve(path, p.resolve)
		if !ok || real == path {
			continue
		}
		if real == "." && sub != "" {
			real, sub = "**", ""
		}
		if len(out) == len(needs) {
			out = append([]capability.Capability(nil), needs...)
		}
		out = append(out, capability.Capability{Resource: n.Resource, Verb: n.Verb, Scope: real + sub})
	}
	return out
}

// resolved remembers the paths one decision resolved: a tool that both
// writes and reads a path (edit_file, move_file's source) needs it
// resolved once, not once per need (each resolution is system calls).
type resolved struct {
	n     int
	paths [4]struct {
		path, real string
		ok         bool
	}
}

// resolve is resolve(path), remembered for the first few paths.
func (r *resolved) resolve(path string, resolve func(string) (string, bool)) (string, bool) {
	for _, e := range r.paths[:r.n] {
		if e.path == path {
			return e.real, e.ok
		}
	}
	real, ok := resolve(path)
	if r.n < len(r.paths) {
		r.paths[r.n].path, r.paths[r.n].real, r.paths[r.n].ok = path, real, ok
		r.n++
	}
	return real, ok
}

// firstCovering returns the index of the first of caps that covers need,
// or -1. prefixes, when given, hold the static prefix of each scope: a
// path pattern can only match a path under its prefix, which saves most
// glob matches in a long list.
func firstCovering(caps []capability.Capability, prefixes []string, need capability.Capability, covers func(capability.Capability, capability.Capability) bool) int {
	filter := len(prefixes) == len(caps) && !capability.HasGlob(need.Scope) && need.Resource != "net"
	for i, c := range caps {
		if c.Resource != need.Resource || c.Verb != need.Verb {
			continue
		}
		if filter && !under(need.Scope, prefixes[i]) {
			continue
		}
		if covers(c, need) {
			return i
		}
	}
	return -1
}

// under reports whether path is dir or inside it ("" is the root).
func under(path, dir string) bool {
	return dir == "" || path == dir || len(path) > len(dir) && path[len(dir)] == '/' && strings.HasPrefix(path, dir)
}

func prefixesOf(caps []capability.Capability) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = capability.StaticPrefix(c.Scope)
	}
	return out
}

// The hints of the two capability denials: a need no grant covers, and one
// a denial (capabilities.deny, --revoke, or the built-in protection of the
// server's own config and audit log) refuses whatever is granted.
const (
	missingHint = "Stay within the paths and resources you were granted; the operator grants capabilities in the config's capabilities.grant."
	deniedHint  = "Do not retry this: it is denied outright (capabilities.deny, or the server's own config and audit log, which no tool may write); work on other paths."
)

func capDeny(rule string, need capability.Capability, hint, format string, args ...any) Decision {
	d := deny(rule, toolerr.New(toolerr.DeniedCapability, hint, format, args...))
	d.Missing = need.String()
	return d
}

func joinCaps(cs []capability.Capability) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, " ")
}
