package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/oauth/oauthtest"
	"github.com/toolwarden/toolwarden/internal/testenv"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

// bearerAnswer POSTs an initialize with tok to the binary and returns the
// status, the WWW-Authenticate challenge and the body. A dropped
// connection (what a panicking handler leaves) fails the test by name.
func bearerAnswer(t *testing.T, base, tok string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(initializeBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "the server answered nothing: a handler that panicked drops the connection")
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("WWW-Authenticate"), string(body)
}

// startHostileIssuerServer serves with OAuth for a fake provider the test
// controls, which signs whatever claims it is given.
func startHostileIssuerServer(t *testing.T) (*oauthtest.Provider, string, *testenv.SyncBuffer) {
	t.Helper()
	idp := oauthtest.New(t)
	ws, env := workspace(t)
	base, stderr := startOAuthServer(t, ws, env, idp.URL, "    audience: "+testenv.Audience+"\n", "")
	return idp, base, stderr
}

// TestOAuthKeyFetchFailureAnswers: the attack on a server whose provider's
// key set cannot be fetched. For the seconds before the next fetch is
// due, any JWT-shaped bearer made the handler panic (no answer, a stack
// trace per request, no authentication needed); now each gets a 401
// invalid_token saying why.
func TestOAuthKeyFetchFailureAnswers(t *testing.T) {
	t.Parallel()
	idp, base, stderr := startHostileIssuerServer(t)
	idp.FailKeys(true)
	signed := idp.Sign(t, idp.Claims("alice", testenv.Audience))
	// A string of the right shape, signed by nobody: what an anonymous
	// attacker sends.
	forged := "eyJhbGciOiJFUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJ4In0.c2ln"
	for i, tok := range []string{signed, signed, forged, forged} {
		status, challenge, body := bearerAnswer(t, base, tok)
		require.Equal(t, http.StatusUnauthorized, status, "request %d: %s", i, body)
		require.Contains(t, challenge, `error="invalid_token"`, "request %d", i)
		require.Contains(t, challenge, "JWKS", "request %d: the challenge says the keys could not be fetched", i)
	}
	require.NotContains(t, stderr.String(), "panic", "no request made the server panic")
	require.EqualValues(t, 1, idp.KeyFetches.Load(), "the failed fetch is not retried per token")
}
