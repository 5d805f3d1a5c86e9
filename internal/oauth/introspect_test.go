package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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

// TestProviderAnswersAreReadStrictly: an introspection answer or issuer
// metadata that two JSON readers would read differently is refused, not
// read the lenient way (the last duplicate, a case twin folded onto a
// field); members toolwarden does not read are still skipped.
func TestProviderAnswersAreReadStrictly(t *testing.T) {
	exp := time.Now().Add(time.Hour).Unix()
	good := `"sub":"alice","scope":"mcp:tools","aud":"` + audience + `","exp":` + strconv.FormatInt(exp, 10)
	answers := map[string]string{
		"extra":         `{"active":true,` + good + `,"username":"a","token_type":"Bearer"}`,
		"twin":          `{"active":false,"Active":true,` + good + `}`,
		"duplicate":     `{"active":false,"active":true,` + good + `}`,
		"duplicate sub": `{"active":true,` + good + `,"sub":"admin"}`,
		"blank sub":     `{"active":true,` + strings.Replace(good, `"alice"`, `" "`, 1) + `}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(answers[r.FormValue("token")]))
	}))
	defer srv.Close()
	v, err := NewVerifier(Config{Issuer: "https://idp.example", Audience: audience,
		Introspection: &Introspection{Endpoint: srv.URL}})
	require.NoError(t, err)
	for token, want := range map[string]string{
		"extra": "", "twin": "not active", "duplicate": "duplicate member name",
		"duplicate sub": "duplicate member name", "blank sub": "(exp, sub)",
	} {
		_, err := v.Verify(context.Background(), token)
		if want == "" {
			require.NoError(t, err, token)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidToken, token)
		require.ErrorContains(t, err, want, token)
	}

	meta := httptest.NewServer(nil)
	defer meta.Close()
	meta.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"issuer":"https://evil.example","issuer":"` + meta.URL + `","jwks_uri":"` + meta.URL + `/jwks"}`))
	})
	_, err = discover(context.Background(), meta.Client(), meta.URL)
	require.ErrorContains(t, err, "duplicate member name")
}
