package e2e

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

// TestOAuthHostileClaims: tokens signed by the configured provider with
// claims RFC 7519 does not allow are refused through the binary, the
// challenge naming the claim: an empty sub (every such token would share
// the identity oauth:@issuer and so each other's sessions and limits) and
// a NumericDate written as a string.
func TestOAuthHostileClaims(t *testing.T) {
	t.Parallel()
	idp, base, _ := startHostileIssuerServer(t)
	for _, tc := range []struct {
		name, claim string
		value       any
	}{
		{"empty sub", "sub", ""},
		{"exp as a digit string", "exp", "4102444800"},
		{"nbf as a digit string", "nbf", "0"},
	} {
		claims := idp.Claims("alice", testenv.Audience)
		claims[tc.claim] = tc.value
		status, challenge, body := bearerAnswer(t, base, idp.Sign(t, claims))
		require.Equal(t, http.StatusUnauthorized, status, "%s: %s", tc.name, body)
		require.Contains(t, challenge, `error="invalid_token"`, tc.name)
		require.Contains(t, challenge, "("+tc.claim+")", "%s: the challenge names the claim", tc.name)
	}
	status, _, body := bearerAnswer(t, base, idp.Sign(t, idp.Claims("alice", testenv.Audience)))
	require.Equal(t, http.StatusOK, status, "the same provider's valid token is accepted: %s", body)
}
