package guard

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/toolerr"
)

// Capability is one authority a tool needs or the policy grants, written
// resource:verb:scope, e.g. fs:read:src/**, net:connect:api.example.com:443,
// proc:exec:python, env:read:HOME, graph:write:*, s3:read:tasks/*.
type Capability struct {
	Resource, Verb, Scope string
}

// Resources are the capability resources toolwarden knows.
var Resources = []string{"fs", "net", "proc", "env", "secrets", "graph", "s3"}

// String renders c as resource:verb:scope.
func (c Capability) String() string { return c.Resource + ":" + c.Verb + ":" + c.Scope }

// ParseCapability parses resource:verb:scope. The scope may itself hold
// colons (net's host:port); it must be a valid glob for the resources that
// take globs.
func ParseCapability(s string) (Capability, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Capability{}, fmt.Errorf("capability %q is not resource:verb:scope", s)
	}
	c := Capability{Resource: parts[0], Verb: parts[1], Scope: parts[2]}
	if !known(c.Resource) {
		return Capability{}, fmt.Errorf("capability %q: unknown resource %q (known: %s)", s, c.Resource, strings.Join(Resources, ", "))
	}
	if !doublestar.ValidatePattern(c.Scope) {
		return Capability{}, fmt.Errorf("capability %q: scope %q is not a valid glob", s, c.Scope)
	}
	if c.Resource == "net" && !strings.Contains(c.Scope, ":") {
		return Capability{}, fmt.Errorf("capability %q: a net scope is host:port (use host:* for any port)", s)
	}
	return c, nil
}

// ParseCapabilities parses a list; see ParseCapability.
func ParseCapabilities(list []string) ([]Capability, error) {
	out := make([]Capability, 0, len(list))
	for _, s := range list {
		c, err := ParseCapability(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func known(resource string) bool {
	for _, r := range Resources {
		if r == resource {
			return true
		}
	}
	return false
}

// Covers reports whether grant (a pattern) covers need. Resource and verb
// must be equal. A need whose scope is itself a pattern (a tool that needs
// "any graph node", graph:write:*) is covered only by the same pattern, by
// "**", or, for a subtree need "dir/**", by a subtree grant "root/**" with
// dir inside root; a literal need is matched against the grant's scope:
//   - fs, s3, graph, proc: doublestar globs ("*" stays within one path
//     segment, "**" crosses them);
//   - net: host:port, "*" matches one DNS label and "**" several, the port
//     is exact or "*"; hosts compare case-insensitively;
//   - env, secrets: exact names only, so a grant never widens by accident.
func Covers(grant, need Capability) bool {
	if grant.Resource != need.Resource || grant.Verb != need.Verb {
		return false
	}
	if need.Resource == "net" {
		return coversHostPort(grant.Scope, need.Scope)
	}
	if hasMeta(need.Scope) {
		return coversPattern(grant.Scope, need.Scope)
	}
	if need.Resource == "env" || need.Resource == "secrets" {
		return grant.Scope == need.Scope
	}
	// ParseCapability validated the grant's scope.
	return doublestar.MatchUnvalidated(grant.Scope, need.Scope)
}

// coversHostPort matches host:port against a host-glob:port pattern. Dots
// become separators, so "*.example.com" matches one label, not
// "evil.com/.example.com" or "a.b.example.com". An IPv6 need ("[::1]:80")
// is matched only by the same address or by "**".
func coversHostPort(pattern, need string) bool {
	ph, pp, ok1 := cutLast(pattern)
	nh, np, ok2 := cutLast(need)
	if !ok1 || !ok2 || !validNetNeed(need) || pp != "*" && pp != np {
		return false
	}
	if strings.HasPrefix(nh, "[") {
		return ph == "**" || strings.EqualFold(ph, nh)
	}
	return doublestar.MatchUnvalidated(strings.ReplaceAll(strings.ToLower(ph), ".", "/"), strings.ReplaceAll(strings.ToLower(nh), ".", "/"))
}

// validNetNeed reports whether need is host:port with a DNS name, an IPv4
// address or a bracketed IPv6 address, and a non-empty port.
func validNetNeed(need string) bool {
	h, port, ok := cutLast(need)
	if !ok || port == "" || strings.ContainsAny(port, "*?[{\\") {
		return false
	}
	if ip, found := strings.CutPrefix(h, "["); found {
		addr, err := netip.ParseAddr(strings.TrimSuffix(ip, "]"))
		return err == nil && addr.Is6() && strings.HasSuffix(ip, "]")
	}
	return validHost(h)
}

// validHost accepts DNS names and IPv4 addresses: non-empty labels of
// letters, digits, '-' and '_' (no empty label, so "*" never matches "").
func validHost(h string) bool {
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// hasMeta reports whether s holds glob syntax.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '{', '\\':
			return true
		}
	}
	return false
}

func coversPattern(grant, need string) bool {
	if grant == need || grant == "**" {
		return true
	}
	g, ok1 := subtreeRoot(grant)
	n, ok2 := subtreeRoot(need)
	return ok1 && ok2 && (n == g || strings.HasPrefix(n, g+"/"))
}

// subtreeRoot returns dir for a scope "dir/**" whose dir is literal.
func subtreeRoot(s string) (string, bool) {
	r, ok := strings.CutSuffix(s, "/**")
	return r, ok && r != "" && !hasMeta(r)
}

// Denies reports whether a deny pattern applies to need. A literal need is
// denied when the pattern covers it. A pattern need (a subtree, or "any")
// is denied when the deny pattern could match anything under it, judged by
// the literal leading segments of both: fail closed, a tool that walks src
// cannot run while anything in src is denied.
func Denies(deny, need Capability) bool {
	if deny.Resource != need.Resource || deny.Verb != need.Verb {
		return false
	}
	if need.Resource == "net" {
		return !validNetNeed(need.Scope) || Covers(deny, need)
	}
	if !hasMeta(need.Scope) {
		return Covers(deny, need)
	}
	if need.Resource == "env" || need.Resource == "secrets" {
		return true
	}
	d, n := staticPrefix(deny.Scope), staticPrefix(need.Scope)
	return d == "" || n == "" || d == n || strings.HasPrefix(d, n+"/") || strings.HasPrefix(n, d+"/")
}

// staticPrefix is the leading path segments of a glob that hold no glob
// syntax; every path the glob matches starts with them.
func staticPrefix(glob string) string {
	segs := strings.Split(glob, "/")
	for i, s := range segs {
		if hasMeta(s) {
			return strings.Join(segs[:i], "/")
		}
	}
	return glob
}

// checkCapabilities denies a call that needs a capability the policy
// revokes or does not grant; the denial names the capability.
func checkCapabilities(in *input) Decision {
	needs, err := Needs(in.tool, in.call.Args)
	if err != nil {
		return deny(err.Rule, err)
	}
	p := in.policy
	for _, n := range needs {
		if i := firstCovering(p.Revoked, p.revokedPrefix, n, Denies); i >= 0 {
			rule := fmt.Sprintf("capabilities.deny:%q", p.Revoked[i].String())
			return capDeny(rule, n, "tool %q needs %s, which the policy denies (rule %s)", in.call.Tool, n, rule)
		}
		if firstCovering(p.Grants, p.grantPrefix, n, Covers) < 0 {
			return capDeny("capabilities.missing", n, "tool %q needs the capability %s, which the policy does not grant", in.call.Tool, n)
		}
	}
	if len(needs) == 0 {
		return pass("capabilities.none_needed")
	}
	d := pass("capabilities.granted")
	d.note = "needs " + joinCaps(needs)
	return d
}

// firstCovering returns the index of the first of caps that covers need,
// or -1. prefixes, when given, hold the static prefix of each scope: a
// path pattern can only match a path under its prefix, which saves most
// glob matches in a long list.
func firstCovering(caps []Capability, prefixes []string, need Capability, covers func(Capability, Capability) bool) int {
	filter := len(prefixes) == len(caps) && !hasMeta(need.Scope) && need.Resource != "net"
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

func prefixesOf(caps []Capability) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = staticPrefix(c.Scope)
	}
	return out
}

func capDeny(rule string, need Capability, format string, args ...any) Decision {
	d := deny(rule, toolerr.New(toolerr.DeniedCapability,
		"Stay within the paths and resources you were granted; the operator grants capabilities in the config's capabilities.grant.",
		format, args...))
	d.Missing = need.String()
	return d
}

func joinCaps(cs []Capability) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, " ")
}
