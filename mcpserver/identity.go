package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
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

// Identity is one HTTP client: its bearer token and the non-secret name
// its limits are counted under and the audit log shows.
type Identity struct {
	Name  string
	Token string
}

// TokenIdentity is the name of a token without a configured one: a short
// digest, stable across restarts, that does not reveal the token.
func TokenIdentity(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token-" + hex.EncodeToString(sum[:6])
}

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

// ResolveIdentities reads the token of every configured HTTP identity.
func ResolveIdentities(ids []configs.HTTPIdentity) ([]Identity, error) {
	out := make([]Identity, 0, len(ids))
	for _, id := range ids {
		var tok, src string
		if id.TokenEnv != "" {
			tok, src = strings.TrimSpace(os.Getenv(id.TokenEnv)), id.TokenEnv
		} else {
			b, err := os.ReadFile(id.TokenFile)
			if err != nil {
				return nil, fmt.Errorf("http.identities %s: %w", id.Name, err)
			}
			tok, src = strings.TrimSpace(string(b)), id.TokenFile
		}
		if err := checkToken(tok, "http.identities "+id.Name+" ("+src+")"); err != nil {
			return nil, err
		}
		out = append(out, Identity{Name: id.Name, Token: tok})
	}
	return out, nil
}
