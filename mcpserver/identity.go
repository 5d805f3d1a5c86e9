package mcpserver

import (
	"context"

	"github.com/toolwarden/toolwarden/internal/oauth"
)

type ctxKey int

const (
	identityKey ctxKey = iota
	trustedKey
	principalKey
	claimsKey
)

// LocalIdentity is the identity of the local client (stdio, in-process):
// there is one.
const LocalIdentity = "local"

func withIdentity(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, identityKey, name)
}

func withPrincipal(ctx context.Context, p *oauth.Principal) context.Context {
	return context.WithValue(ctx, principalKey, p)
}

// identityOf is the authenticated identity of a call's HTTP request, or
// the local client's.
func identityOf(ctx context.Context) string {
	if id, ok := ctx.Value(identityKey).(string); ok && id != "" {
		return id
	}
	return LocalIdentity
}

// isTrusted reports whether the call is an operator's (toolwarden call
// --trusted). Only code in this process can set it; nothing a client
// sends can.
func isTrusted(ctx context.Context) bool {
	t, _ := ctx.Value(trustedKey).(bool)
	return t
}
