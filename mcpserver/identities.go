package mcpserver

import (
	"context"
	"fmt"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/capability"
	"github.com/toolwarden/toolwarden/internal/oauth"
)

// IdentityLayers converts the config's identities rules into the
// guard's narrowing layers.
func IdentityLayers(rules []configs.IdentityRule) ([]guard.IdentityLayer, error) {
	out := make([]guard.IdentityLayer, 0, len(rules))
	for _, r := range rules {
		key := "identities " + r.Name
		for _, g := range append(append([]string(nil), r.Allow...), r.Deny...) {
			if !doublestar.ValidatePattern(g) {
				return nil, fmt.Errorf("%s: invalid tool-name glob %q", key, g)
			}
		}
		revoke, err := capability.ParseList(r.Revoke)
		if err != nil {
			return nil, fmt.Errorf("%s: revoke: %w", key, err)
		}
		grant, err := capability.ParseList(r.Grant)
		if err != nil {
			return nil, fmt.Errorf("%s: grant: %w", key, err)
		}
		modes := map[string]guard.ApprovalMode{}
		for g, m := range r.Approval {
			if modes[g], err = guard.ParseApprovalMode(m); err != nil || !doublestar.ValidatePattern(g) {
				return nil, fmt.Errorf("%s: approval %q: %q", key, g, m)
			}
		}
		m, l := r.Match, r.Limits
		out = append(out, guard.IdentityLayer{
			Name: r.Name, Allow: r.Allow, Deny: r.Deny, Grant: grant, Revoke: revoke, Approval: modes,
			Match: guard.IdentityMatch{Identities: m.Identities, Subjects: m.Subjects, ClientIDs: m.ClientIDs, Groups: m.Groups, Scopes: m.Scopes},
			Limits: guard.LayerLimits{MaxCalls: l.MaxCallsPerSession, MaxOutputBytes: l.MaxOutputBytesPerSession,
				MaxBytesIn: l.MaxBytesInPerSession, Budget: l.Budget},
		})
	}
	return out, nil
}

// claimsOf is what identities rules may match of a call's caller: its
// access token's claims, or nothing for a static token or the local
// client.
func claimsOf(ctx context.Context) guard.Claims {
	if c, ok := ctx.Value(claimsKey).(guard.Claims); ok {
		return c
	}
	p, _ := ctx.Value(principalKey).(*oauth.Principal)
	if p == nil {
		return guard.Claims{}
	}
	return ClaimsOf(p)
}

// ClaimsOf reads the claims identities rules match from a principal;
// groups come from the token's groups claim (a list or one string).
func ClaimsOf(p *oauth.Principal) guard.Claims {
	c := guard.Claims{Subject: p.Subject, ClientID: p.ClientID, Scopes: p.Scopes}
	switch g := p.Claims["groups"].(type) {
	case string:
		c.Groups = []string{g}
	case []any:
		for _, v := range g {
			if s, ok := v.(string); ok {
				c.Groups = append(c.Groups, s)
			}
		}
	}
	return c
}

// AsCaller returns ctx making calls as the given identity with claims:
// `toolwarden policy explain --as` decides for that caller.
func AsCaller(ctx context.Context, identity string, c guard.Claims) context.Context {
	return context.WithValue(withIdentity(ctx, identity), claimsKey, c)
}
