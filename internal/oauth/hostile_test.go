package oauth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/internal/oauth/oauthtest"
)

const resource = "https://tools.example/mcp"

func verifierFor(t *testing.T, p *oauthtest.Provider) *oauth.Verifier {
	t.Helper()
	v, err := oauth.NewVerifier(oauth.Config{Issuer: p.URL, Audience: resource})
	require.NoError(t, err)
	return v
}

// TestKeyFetchFailureRefusesCleanly: after the issuer's JWKS could not
// be fetched, every JWT-shaped token is refused with a reason, none
// panics, and the failed fetch is not retried for each token (the
// negative cache still bounds what a flood costs the provider).
func TestKeyFetchFailureRefusesCleanly(t *testing.T) {
	p := oauthtest.New(t)
	p.FailKeys(true)
	v := verifierFor(t, p)
	tok := p.Sign(t, p.Claims("alice", resource))
	for i := range 5 {
		var err error
		require.NotPanics(t, func() { _, err = v.Verify(context.Background(), tok) }, "attempt %d", i)
		require.ErrorIs(t, err, oauth.ErrInvalidToken, "attempt %d", i)
		require.ErrorContains(t, err, "JWKS", "attempt %d", i)
	}
	require.EqualValues(t, 1, p.KeyFetches.Load(), "one fetch, then the failure is remembered")
}
