package httpserve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
)

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

// TokenEnv is the environment variable holding the HTTP bearer token.
const TokenEnv = "TOOLWARDEN_HTTP_TOKEN"

// ResolveToken returns the bearer token: from TOOLWARDEN_HTTP_TOKEN, else
// from http.token_file or http.token_vault, else from the variable in
// secrets.dotenv, else a new random one (generated reports true). The
// error names the source, never the token.
func ResolveToken(ctx context.Context, h configs.HTTP) (token string, generated bool, err error) {
	if t := strings.TrimSpace(os.Getenv(TokenEnv)); t != "" {
		return t, false, checkToken(t, TokenEnv)
	}
	ref := h.TokenRef()
	t, err := h.Secret(ctx, ref)
	if err != nil {
		return "", false, err
	}
	if t = strings.TrimSpace(t); t != "" {
		return t, false, checkToken(t, ref.String())
	}
	if ref.File != "" || ref.Vault != "" {
		return "", false, fmt.Errorf("%s is empty", ref)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(b[:]), true, nil
}

func checkToken(t, src string) error {
	if len(t) < 16 {
		return fmt.Errorf("%s: the bearer token must be at least 16 characters", src)
	}
	return nil
}

// ResolveIdentities reads the token of every configured HTTP identity
// from its token_env, token_file or token_vault.
func ResolveIdentities(ctx context.Context, h configs.HTTP) ([]Identity, error) {
	out := make([]Identity, 0, len(h.Identities))
	for i, id := range h.Identities {
		ref := id.TokenRef(i)
		tok, err := h.Secret(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("http.identities %s: %w", id.Name, err)
		}
		if err := checkToken(strings.TrimSpace(tok), "http.identities "+id.Name+" ("+ref.String()+")"); err != nil {
			return nil, err
		}
		out = append(out, Identity{Name: id.Name, Token: strings.TrimSpace(tok)})
	}
	return out, nil
}
