// Package guard decides, for every tool call, whether it may run: allow and
// deny lists, trust, capabilities, limits per identity and per tool, strict
// argument validation and path rules, then caps the output and writes a
// hash-chained audit line.
//
// The decision itself (Decide) is a pure function over plain data, so it can
// be table-tested and fuzzed; Guard adds the state (usage counters and rate
// buckets per identity, audit log) around it. The guard fails closed: if anything in it errors, the call
// is denied.
package guard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/internal/capability"
)

// Policy is the allow/deny list over tool names. Deny always wins; a name
// that matches no allow glob is not allowed.
type Policy struct {
	Allow []string
	Deny  []string
	// Grants are the capabilities tools may use; Revoked ones are denied
	// even when granted.
	Grants, Revoked []capability.Capability
	// grantPrefix and revokedPrefix are the static prefixes of their scopes.
	grantPrefix, revokedPrefix []string
	// later are the default grants of tools made known while the guard
	// serves (Guard.GrantLater), shared by every copy of the policy.
	later *laterGrants
	// resolve gives the workspace path a path resolves to through
	// symlinks (WithPathResolver).
	resolve func(string) (string, bool)
	// secrets are path globs of files no tool may read or write
	// (WithSecretFiles).
	secrets []fileGlob
	// allowRules and denyRules are the rule names Match returns for each
	// glob, made once by NewPolicy rather than on every call.
	allowRules, denyRules []namedGlob
}

// WithPathResolver returns p checking fs capabilities on the path each
// named path resolves to as well: resolve returns the workspace-relative
// path a path leads to through symlinks, and false when it cannot say
// (a link out of the workspace, which the tools refuse anyway).
func (p Policy) WithPathResolver(resolve func(string) (string, bool)) Policy {
	p.resolve = resolve
	return p
}

// NewPolicy checks the globs and returns the policy.
func NewPolicy(allow, deny []string) (Policy, error) {
	for _, g := range append(append([]string(nil), allow...), deny...) {
		if !doublestar.ValidatePattern(g) {
			return Policy{}, fmt.Errorf("invalid tool-name glob %q", g)
		}
	}
	return Policy{Allow: allow, Deny: deny, allowRules: ruleNames("allow:", allow), denyRules: ruleNames("deny:", deny)}, nil
}

// namedGlob is a glob with the name of its rule, such as
// `allow:"read_file"`.
type namedGlob struct{ glob, rule string }

func ruleNames(kind string, globs []string) []namedGlob {
	out := make([]namedGlob, len(globs))
	for i, g := range globs {
		out[i] = namedGlob{g, kind + strconv.Quote(g)}
	}
	return out
}

// ruleName is the rule name of glob, the i-th of its list: the one
// NewPolicy made, or one made now for a policy built otherwise.
func ruleName(rules []namedGlob, i int, kind, glob string) string {
	if i < len(rules) && rules[i].glob == glob {
		return rules[i].rule
	}
	return kind + strconv.Quote(glob)
}

// Match reports whether tool is allowed and names the deciding rule, such as
// `deny:"write_*"`, `allow:"read_file"` or `default:not_allowlisted`.
func (p Policy) Match(tool string) (bool, string) {
	// NewPolicy validated the globs.
	for i, g := range p.Deny {
		if nameMatch(g, tool) {
			return false, ruleName(p.denyRules, i, "deny:", g)
		}
	}
	for i, g := range p.Allow {
		if nameMatch(g, tool) {
			return true, ruleName(p.allowRules, i, "allow:", g)
		}
	}
	return false, "default:not_allowlisted"
}

// WithCapabilities returns p granting grant and denying revoke, both
// lists of resource:verb:scope.
func (p Policy) WithCapabilities(grant, revoke []string) (Policy, error) {
	var err error
	if p.Grants, err = capability.ParseList(grant); err != nil {
		return Policy{}, err
	}
	if p.Revoked, err = capability.ParseList(revoke); err != nil {
		return Policy{}, err
	}
	p.grantPrefix, p.revokedPrefix = prefixesOf(p.Grants), prefixesOf(p.Revoked)
	p.later = &laterGrants{}
	return p, nil
}

// nameMatch matches a validated tool-name glob. A name can only match a
// glob that it starts with the literal head of, which skips the glob
// matcher for most globs of a long list.
func nameMatch(glob, name string) bool {
	head := glob
	for i := 0; i < len(glob); i++ {
		if c := glob[i]; c == '*' || c == '?' || c == '[' || c == '{' || c == '\\' {
			head = glob[:i]
			break
		}
	}
	return strings.HasPrefix(name, head) && doublestar.MatchUnvalidated(glob, name)
}
