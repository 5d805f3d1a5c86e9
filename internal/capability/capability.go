// Package capability is the grammar of capabilities, resource:verb:scope
// (fs:read:src/**, net:connect:api.example.com:443, proc:exec:python), and
// the matching of a need against a grant or a deny. The guard decides with
// it and configs validates the capabilities of a config file with it; it
// imports no other toolwarden package, so neither of them pulls in the
// other.
package capability

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Capability is one authority a tool needs or the policy grants, written
// resource:verb:scope, e.g. fs:read:src/**, net:connect:api.example.com:443,
// proc:exec:python, env:read:HOME, graph:write:*, s3:read:tasks/*,
// mcp:call:files/read_file (an upstream server's tool, upstream/tool).
type Capability struct {
	Resource, Verb, Scope string
}

// Resources are the capability resources toolwarden knows.
var Resources = []string{"fs", "net", "proc", "env", "secrets", "graph", "s3", "mcp"}

// String renders c as resource:verb:scope.
func (c Capability) String() string { return c.Resource + ":" + c.Verb + ":" + c.Scope }

// Parse parses resource:verb:scope. The scope may itself hold
// colons (net's host:port); it must be a valid glob for the resources that
// take globs.
func Parse(s string) (Capability, error) {
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

// ParseList parses a list; see Parse.
func ParseList(list []string) ([]Capability, error) {
	out := make([]Capability, 0, len(list))
	for _, s := range list {
		c, err := Parse(s)
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
	if HasGlob(need.Scope) {
		return coversPattern(grant.Scope, need.Scope)
	}
	if need.Resource == "env" || need.Resource == "secrets" {
		return grant.Scope == need.Scope
	}
	// Parse validated the grant's scope.
	return doublestar.MatchUnvalidated(grant.Scope, need.Scope)
}

// HasGlob reports whether s holds glob syntax. A need whose scope has it
// stands for many paths and is judged as a pattern (see Covers, Denies).
func HasGlob(s string) bool {
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
	return r, ok && r != "" && !HasGlob(r)
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
	if !HasGlob(need.Scope) {
		return Covers(deny, need)
	}
	if need.Resource == "env" || need.Resource == "secrets" {
		return true
	}
	d, n := StaticPrefix(deny.Scope), StaticPrefix(need.Scope)
	return d == "" || n == "" || d == n || strings.HasPrefix(d, n+"/") || strings.HasPrefix(n, d+"/")
}

// StaticPrefix is the leading path segments of a glob that hold no glob
// syntax; every path the glob matches starts with them.
func StaticPrefix(glob string) string {
	segs := strings.Split(glob, "/")
	for i, s := range segs {
		if HasGlob(s) {
			return strings.Join(segs[:i], "/")
		}
	}
	return glob
}
