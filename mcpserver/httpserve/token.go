package httpserve

import (
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
// from tokenFile, else a new random one (generated reports true).
func ResolveToken(tokenFile string) (token string, generated bool, err error) {
	if t := strings.TrimSpace(os.Getenv(TokenEnv)); t != "" {
		return t, false, checkToken(t, TokenEnv)
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("http.token_file: %w", err)
		}
		t := strings.TrimSpace(string(b))
		return t, false, checkToken(t, tokenFile)
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
