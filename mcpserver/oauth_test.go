package mcpserver_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/internal/testenv"
	"github.com/toolwarden/toolwarden/mcpserver"
)

// oauthServer serves the fixture over HTTP accepting the real provider's
// access tokens for testenv.Audience with scope mcp:tools, and the static
// test token.
func oauthServer(t *testing.T, f *fixture, issuer string) *httptest.Server {
	t.Helper()
	v, err := oauth.NewVerifier(oauth.Config{Issuer: issuer, Audience: testenv.Audience, Scopes: []string{"mcp:tools"}})
	require.NoError(t, err)
	h, stop := f.server(t).HTTPHandler(mcpserver.HTTPOptions{
		Token: testToken, MaxBodyBytes: 64 << 10, MaxSessions: 10, IdleTimeout: time.Minute, OAuth: v,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		stop(ctxT(t))
		srv.Close()
	})
	return srv
}

// TestOAuthWithARealProvider gets real access tokens from Ory Hydra and
// sends them, and forgeries made from them, to the server.
func TestOAuthWithARealProvider(t *testing.T) {
	idp := testenv.NeedOIDC(t)
	srv := oauthServer(t, newFixture(t), idp.Issuer)
	meta := `resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	valid := idp.Token(t, idp.Issuer, "toolwarden-cc", "mcp:tools", testenv.Audience)
	short := idp.Token(t, idp.Issuer, "toolwarden-cc-short", "mcp:tools", testenv.Audience)
	cases := []struct {
		name, token string
		status      int
		challenge   string // a part of WWW-Authenticate
	}{
		{"valid", valid, http.StatusOK, ""},
		{"static token", testToken, http.StatusOK, ""},
		{"no token", "", http.StatusUnauthorized, meta},
		{"wrong audience", idp.Token(t, idp.Issuer, "toolwarden-cc", "mcp:tools", testenv.OtherAudience), http.StatusUnauthorized, `error="invalid_token"`},
		{"another issuer", idp.Token(t, idp.OtherIssuer, "toolwarden-cc", "mcp:tools", testenv.Audience), http.StatusUnauthorized, `error="invalid_token"`},
		{"tampered signature", tamperSignature(valid), http.StatusUnauthorized, `error="invalid_token"`},
		{"tampered subject", withClaim(t, valid, "sub", "admin"), http.StatusUnauthorized, `error="invalid_token"`},
		{"alg none", algNone(t, valid), http.StatusUnauthorized, `algorithm 'none' is not accepted`},
		{"signed by another key", resign(t, valid), http.StatusUnauthorized, `error="invalid_token"`},
		{"missing scope", idp.Token(t, idp.Issuer, "toolwarden-cc", "mcp:admin", testenv.Audience), http.StatusForbidden, `error="insufficient_scope", scope="mcp:tools"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := postInit(t, srv.URL, tc.token)
			body, _ := io.ReadAll(res.Body)
			require.Equal(t, tc.status, res.StatusCode, string(body))
			if tc.challenge != "" {
				h := res.Header.Get("WWW-Authenticate")
				require.Contains(t, h, meta)
				require.Contains(t, h, tc.challenge)
			}
		})
	}
	time.Sleep(2 * time.Second) // toolwarden-cc-short's tokens live 1 s; the skew is 0
	res := postInit(t, srv.URL, short)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), `error="invalid_token", error_description="the token has expired (exp)"`)
}

func TestOAuthProtectedResourceMetadata(t *testing.T) {
	v, err := oauth.NewVerifier(oauth.Config{Issuer: "https://idp.example", Audience: "https://tools.example/mcp", Scopes: []string{"mcp:tools"}})
	require.NoError(t, err)
	h, stop := newFixture(t).server(t).HTTPHandler(mcpserver.HTTPOptions{MaxBodyBytes: 1 << 10, MaxSessions: 1, IdleTimeout: time.Minute, OAuth: v})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer stop(ctxT(t))
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		res, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&m))
		res.Body.Close()
		require.Equal(t, map[string]any{"resource": "https://tools.example/mcp", "authorization_servers": []any{"https://idp.example"},
			"scopes_supported": []any{"mcp:tools"}, "bearer_methods_supported": []any{"header"}, "resource_name": "toolwarden"}, m)
	}
	res := postInit(t, srv.URL, "")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no static token was configured")
}

func postInit(t *testing.T, url, token string) *http.Response {
	t.Helper()
	hdr := map[string]string{}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	return testenv.PostMCP(t, url+"/mcp", hdr, initBody)
}

var b64 = base64.RawURLEncoding

func tamperSignature(tok string) string {
	i := strings.LastIndexByte(tok, '.')
	sig, _ := b64.DecodeString(tok[i+1:])
	sig[len(sig)/2] ^= 0x01
	return tok[:i+1] + b64.EncodeToString(sig)
}

func splitJWT(t *testing.T, tok string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)
	for i, into := range []*map[string]any{&header, &claims} {
		b, err := b64.DecodeString(parts[i])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, into))
	}
	return header, claims
}

func encodeJWT(t *testing.T, header, claims map[string]any) string {
	t.Helper()
	h, err := json.Marshal(header)
	require.NoError(t, err)
	c, err := json.Marshal(claims)
	require.NoError(t, err)
	return b64.EncodeToString(h) + "." + b64.EncodeToString(c)
}

// withClaim changes one claim and keeps the original signature.
func withClaim(t *testing.T, tok, k string, v any) string {
	h, c := splitJWT(t, tok)
	c[k] = v
	return encodeJWT(t, h, c) + tok[strings.LastIndexByte(tok, '.'):]
}

func algNone(t *testing.T, tok string) string {
	h, c := splitJWT(t, tok)
	h["alg"] = "none"
	return encodeJWT(t, h, c) + "."
}

// resign signs the token's header and claims with a key of our own,
// keeping the provider's key ID.
func resign(t *testing.T, tok string) string {
	h, c := splitJWT(t, tok)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signed := encodeJWT(t, h, c)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	require.NoError(t, err)
	return signed + "." + b64.EncodeToString(sig)
}

// TestOAuthIntrospectionWithARealProvider: Hydra's opaque access tokens
// are valid through RFC 7662 introspection, and refused without it.
func TestOAuthIntrospectionWithARealProvider(t *testing.T) {
	idp := testenv.NeedOIDC(t)
	serve := func(introspect bool) string {
		cfg := oauth.Config{Issuer: idp.Issuer, Audience: testenv.Audience, Scopes: []string{"mcp:tools"}}
		if introspect {
			cfg.Introspection = &oauth.Introspection{Endpoint: idp.Introspect()}
		}
		v, err := oauth.NewVerifier(cfg)
		require.NoError(t, err)
		h, stop := newFixture(t).server(t).HTTPHandler(mcpserver.HTTPOptions{MaxBodyBytes: 64 << 10, MaxSessions: 10, IdleTimeout: time.Minute, OAuth: v})
		srv := httptest.NewServer(h)
		t.Cleanup(func() { stop(ctxT(t)); srv.Close() })
		return srv.URL
	}
	client := idp.OpaqueClient(t, testenv.Audience, testenv.OtherAudience)
	opaque := idp.Token(t, idp.Issuer, client, "mcp:tools", testenv.Audience)
	require.Equal(t, 1, strings.Count(opaque, "."), "Hydra's opaque tokens are not JWTs: %s", opaque)
	with, without := serve(true), serve(false)
	require.Equal(t, http.StatusOK, postInit(t, with, opaque).StatusCode)
	res := postInit(t, without, opaque)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), `error_description="not a signed JWT"`)
	res = postInit(t, with, idp.Token(t, idp.Issuer, client, "mcp:tools", testenv.OtherAudience))
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), "not for this resource (aud)")
	res = postInit(t, with, idp.Token(t, idp.Issuer, client, "mcp:admin", testenv.Audience))
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res = postInit(t, with, "ory_at_forged."+strings.Repeat("A", 43))
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), "not active")
}

// TestOAuthAuthorizationCodeWithPKCE: a person's token from the
// authorization code flow with PKCE (the public client's) is accepted,
// and its identity is the person's subject at the issuer.
func TestOAuthAuthorizationCodeWithPKCE(t *testing.T) {
	idp := testenv.NeedOIDC(t)
	srv := oauthServer(t, newFixture(t), idp.Issuer)
	tok := idp.PKCEToken(t, "alice@example.com", "openid mcp:tools", testenv.Audience)
	res := postInit(t, srv.URL, tok)
	require.Equal(t, http.StatusOK, res.StatusCode)
	_, claims := splitJWT(t, tok)
	require.Equal(t, "alice@example.com", claims["sub"])
	require.Equal(t, "toolwarden-pkce", claims["client_id"])
}
