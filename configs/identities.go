package configs

import (
	"fmt"
	"slices"

	"github.com/toolwarden/toolwarden/internal/capability"
)

// IdentityRule is one identities entry: an extra policy layer for the
// callers it matches (see docs/oauth.md). It only narrows the base policy.
type IdentityRule struct {
	Name  string        `mapstructure:"name" yaml:"name"`
	Match IdentityMatch `mapstructure:"match" yaml:"match"`
	// Allow, when set, is an allowlist of tool-name globs the tool must
	// match besides policy.allow; Deny refuses more tools.
	Allow []string `mapstructure:"allow" yaml:"allow"`
	Deny  []string `mapstructure:"deny" yaml:"deny"`
	// Grant, when set, bounds the capabilities these callers may use: a
	// need must be covered here and by capabilities.grant.
	Grant []string `mapstructure:"grant" yaml:"grant"`
	// Revoke denies capabilities whatever capabilities.grant says.
	Revoke []string `mapstructure:"revoke" yaml:"revoke"`
	// Approval makes tools' approval modes stricter (allow < elicit < deny).
	Approval map[string]string `mapstructure:"approval" yaml:"approval"`
	// Limits lower the counted limits for these callers.
	Limits IdentityLimits `mapstructure:"limits" yaml:"limits"`
}

// IdentityMatch selects callers: every field set must match one of its
// values. Identities are names of static tokens (http.identities, or
// token-<digest>) or of OAuth callers (oauth:<sub>@<issuer>); the others
// are claims of an OAuth access token (sub, client_id, groups, scope/scp).
type IdentityMatch struct {
	Identities []string `mapstructure:"identities" yaml:"identities"`
	Subjects   []string `mapstructure:"subjects" yaml:"subjects"`
	ClientIDs  []string `mapstructure:"client_ids" yaml:"client_ids"`
	Groups     []string `mapstructure:"groups" yaml:"groups"`
	Scopes     []string `mapstructure:"scopes" yaml:"scopes"`
}

// IdentityLimits are the counted limits an identities rule may lower
// (0: the base limit).
type IdentityLimits struct {
	MaxCallsPerSession       int   `mapstructure:"max_calls_per_session" yaml:"max_calls_per_session"`
	MaxOutputBytesPerSession int64 `mapstructure:"max_output_bytes_per_session" yaml:"max_output_bytes_per_session"`
	MaxBytesInPerSession     int64 `mapstructure:"max_bytes_in_per_session" yaml:"max_bytes_in_per_session"`
	Budget                   int64 `mapstructure:"budget" yaml:"budget"`
}

// IdentityScopes are every scope the identities rules match on, for the OAuth metadata's
// scopes_supported.
func (c *Config) IdentityScopes() []string {
	var out []string
	for _, r := range c.Identities {
		for _, s := range r.Match.Scopes {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func validateIdentityRules(rules []IdentityRule, add func(string, string, ...any)) {
	seen := map[string]bool{}
	for i, r := range rules {
		key := fmt.Sprintf("identities[%d]", i)
		if !identityName.MatchString(r.Name) || seen[r.Name] {
			add(key+".name", "%q must be a unique lower-case name", r.Name)
		}
		seen[r.Name] = true
		m := r.Match
		if len(m.Identities)+len(m.Subjects)+len(m.ClientIDs)+len(m.Groups)+len(m.Scopes) == 0 {
			add(key+".match", "set at least one of identities, subjects, client_ids, groups, scopes")
		}
		if _, err := capability.ParseList(r.Revoke); err != nil {
			add(key+".revoke", "%v", err)
		}
		if _, err := capability.ParseList(r.Grant); err != nil {
			add(key+".grant", "%v", err)
		}
		for glob, mode := range r.Approval {
			if !slices.Contains([]string{"allow", "elicit", "deny"}, mode) {
				add(key+".approval", "%q: %q is not one of allow, elicit, deny", glob, mode)
			}
		}
		l := r.Limits
		if l.MaxCallsPerSession < 0 || l.MaxOutputBytesPerSession < 0 || l.MaxBytesInPerSession < 0 || l.Budget < 0 {
			add(key+".limits", "limits must not be negative")
		}
	}
}
