package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestIntrospectionOfOpaqueTokens: an opaque token is valid only if the
// provider says it is active, for this issuer and audience, unexpired.
func TestIntrospectionOfOpaqueTokens(t *testing.T) {
	now := time.Now()
	answers := map[string]map[string]any{
		"good":      {"active": true, "sub": "alice", "client_id": "cli", "scope": "mcp:tools", "aud": []string{audience}, "exp": now.Add(time.Hour).Unix()},
		"aud-one":   {"active": true, "sub": "alice", "scope": "mcp:tools", "aud": audience, "exp": now.Add(time.Hour).Unix()},
		"inactive":  {"active": false},
		"other-aud": {"active": true, "sub": "alice", "scope": "mcp:tools", "aud": []string{"https://other.example"}, "exp": now.Add(time.Hour).Unix()},
		"no-aud":    {"active": true, "sub": "alice", "scope": "mcp:tools", "exp": now.Add(time.Hour).Unix()},
		"other-iss": {"active": true, "sub": "alice", "scope": "mcp:tools", "aud": audience, "iss": "https://evil.example", "exp": now.Add(time.Hour).Unix()},
		"expired":   {"active": true, "sub": "alice", "scope": "mcp:tools", "aud": audience, "exp": now.Add(-time.Hour).Unix()},
		"no-exp":    {"active": true, "sub": "alice", "scope": "mcp:tools", "aud": audience},
		"no-scope":  {"active": true, "sub": "alice", "scope": "other", "aud": audience, "exp": now.Add(time.Hour).Unix()},
	}
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		user, pass, _ := r.BasicAuth()
		require.Equal(t, "tw", user)
		require.Equal(t, "s3cret", pass)
		_ = json.NewEncoder(w).Encode(answers[r.FormValue("token")])
	}))
	defer srv.Close()
	v, err := NewVerifier(Config{Issuer: "https://idp.example", Audience: audience, Scopes: []string{"mcp:tools"},
		Introspection: &Introspection{Endpoint: srv.URL, ClientID: "tw", ClientSecret: "s3cret"}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	ctx := context.Background()
	for token, want := range map[string]string{
		"good": "", "aud-one": "", "inactive": "not active", "other-aud": "(aud)", "no-aud": "(aud)",
		"other-iss": "(iss)", "expired": "(exp)", "no-exp": "(exp)", "no-scope": "lacks scope",
	} {
		p, err := v.Verify(ctx, token)
		if want == "" {
			require.NoError(t, err, token)
			require.Equal(t, "oauth:alice@https://idp.example", p.Name())
			continue
		}
		require.Error(t, err, token)
		require.Contains(t, err.Error(), want, token)
	}
	n := asked.Load()
	_, err = v.Verify(ctx, "good")
	require.NoError(t, err)
	require.Equal(t, n, asked.Load(), "an active answer is cached")
}
