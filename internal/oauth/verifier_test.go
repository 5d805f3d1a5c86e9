package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/stretchr/testify/require"
)

const audience = "https://tools.example/mcp"

// provider is a fake identity provider: metadata and a JWKS over HTTP,
// and the private keys to mint tokens with.
type provider struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    map[string]any // kid -> private key
	public  jwk.Set
	fetches atomic.Int32
	issuer  string // what the metadata says; the server's URL by default
}

func newProvider(t testing.TB) *provider {
	p := &provider{keys: map[string]any{}, public: jwk.NewSet()}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": p.issuer, "jwks_uri": p.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(p.public)
	})
	p.srv = httptest.NewServer(mux)
	p.issuer = p.srv.URL
	t.Cleanup(p.srv.Close)
	p.addKey(t, "rsa-1", mustRSA(t), jwa.RS256())
	p.addKey(t, "ec-1", mustEC(t), jwa.ES256())
	return p
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k
}

func mustEC(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

func (p *provider) addKey(t testing.TB, kid string, priv any, alg jwa.SignatureAlgorithm) {
	pub, err := jwk.PublicKeyOf(priv)
	require.NoError(t, err)
	require.NoError(t, pub.Set(jwk.KeyIDKey, kid))
	require.NoError(t, pub.Set(jwk.AlgorithmKey, alg))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kid] = priv
	require.NoError(t, p.public.AddKey(pub))
}

// claims are a valid token's claims at now; a case changes them.
func (p *provider) claims(now time.Time) map[string]any {
	return map[string]any{"iss": p.srv.URL, "sub": "alice", "aud": []string{audience}, "client_id": "cli",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "nbf": now.Unix(), "scope": "mcp:tools extra"}
}

// sign signs claims with the key kid (of p, or key when given).
func (p *provider) sign(t testing.TB, kid string, alg jwa.SignatureAlgorithm, claims map[string]any, key any) string {
	tok := jwt.New()
	for k, v := range claims {
		require.NoError(t, tok.Set(k, v))
	}
	if key == nil {
		key = p.keys[kid]
	}
	hdr := jws.NewHeaders()
	require.NoError(t, hdr.Set(jws.KeyIDKey, kid))
	b, err := jwt.Sign(tok, jwt.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	require.NoError(t, err)
	return string(b)
}

func unsigned(claims map[string]any, alg string) string {
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": "rsa-1", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc(h) + "." + enc(c) + "."
}

// hmacWithPublicKey is the classic confusion attack: HS256 keyed with the
// RSA public key the server would use to verify.
func hmacWithPublicKey(t testing.TB, p *provider, claims map[string]any) string {
	pub := &p.keys["rsa-1"].(*rsa.PrivateKey).PublicKey
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return p.sign(t, "rsa-1", jwa.HS256(), claims, der)
}

func newTestVerifier(t testing.TB, p *provider, now func() time.Time) *Verifier {
	v, err := NewVerifier(Config{Issuer: p.srv.URL, Audience: audience, Scopes: []string{"mcp:tools"},
		ClockSkew: 30 * time.Second, HTTPClient: p.srv.Client(), Now: now})
	require.NoError(t, err)
	return v
}

func TestVerifyHostileTokens(t *testing.T) {
	p := newProvider(t)
	now := time.Now()
	v := newTestVerifier(t, p, func() time.Time { return now })
	with := func(k string, val any) map[string]any {
		c := p.claims(now)
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	rs := func(c map[string]any) string { return p.sign(t, "rsa-1", jwa.RS256(), c, nil) }
	valid := rs(p.claims(now))
	cases := []struct {
		name, token, want string // want: "" valid, else the error's text
		err               error
	}{
		{"valid RS256", valid, "", nil},
		{"valid ES256", p.sign(t, "ec-1", jwa.ES256(), p.claims(now), nil), "", nil},
		{"audience among others", rs(with("aud", []string{"https://other.example", audience})), "", nil},
		{"expired within the skew", rs(with("exp", now.Add(-20*time.Second).Unix())), "", nil},
		{"alg none", unsigned(p.claims(now), "none"), `algorithm "none" is not accepted`, ErrInvalidToken},
		{"HS256 keyed with the public key", hmacWithPublicKey(t, p, p.claims(now)), `algorithm "HS256" is not accepted`, ErrInvalidToken},
		{"RS256 header on the EC key", p.sign(t, "ec-1", jwa.RS256(), p.claims(now), mustRSA(t)), "is for ES256", ErrInvalidToken},
		{"wrong audience", rs(with("aud", []string{"https://other.example/mcp"})), "(aud)", ErrInvalidToken},
		{"no audience", rs(with("aud", nil)), "(aud)", ErrInvalidToken},
		{"expired", rs(with("exp", now.Add(-time.Minute).Unix())), "(exp)", ErrInvalidToken},
		{"not yet valid", rs(with("nbf", now.Add(time.Minute).Unix())), "(nbf)", ErrInvalidToken},
		{"other issuer", rs(with("iss", "https://evil.example")), "(iss)", ErrInvalidToken},
		{"no subject", rs(with("sub", nil)), "required claim", ErrInvalidToken},
		{"signed by another key", p.sign(t, "rsa-1", jwa.RS256(), p.claims(now), mustRSA(t)), "does not verify", ErrInvalidToken},
		{"unknown key", p.sign(t, "rsa-9", jwa.RS256(), p.claims(now), mustRSA(t)), `no key "rsa-9"`, ErrInvalidToken},
		{"tampered payload", tamper(valid), "does not verify", ErrInvalidToken},
		{"not a JWT", "opaque-token-0123456789", "not a signed JWT", ErrInvalidToken},
		{"garbage header", "!!!.e30.sig", "malformed", ErrInvalidToken},
		{"missing scope", rs(with("scope", "extra")), `lacks scope "mcp:tools"`, ErrInsufficientScope},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := v.Verify(context.Background(), tc.token)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, "alice", pr.Subject)
				require.Equal(t, "oauth:alice@"+p.srv.URL, pr.Name())
				return
			}
			require.Error(t, err)
			require.True(t, errors.Is(err, tc.err), "%v", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// tamper changes the subject without re-signing.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	b = []byte(strings.Replace(string(b), `"alice"`, `"admin"`, 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

func TestScopesFromScpList(t *testing.T) {
	p := newProvider(t)
	now := time.Now()
	v := newTestVerifier(t, p, func() time.Time { return now })
	c := p.claims(now)
	delete(c, "scope")
	c["scp"] = []string{"mcp:tools"}
	pr, err := v.Verify(context.Background(), p.sign(t, "rsa-1", jwa.RS256(), c, nil))
	require.NoError(t, err)
	require.Equal(t, []string{"mcp:tools"}, pr.Scopes)
	require.Equal(t, "cli", pr.ClientID)
}

// TestUnknownKeyRefreshIsBounded: a rotated key is found by fetching the
// JWKS again, but invented key IDs cost one fetch per minRefresh.
func TestUnknownKeyRefreshIsBounded(t *testing.T) {
	p := newProvider(t)
	now := time.Now()
	v := newTestVerifier(t, p, func() time.Time { return now })
	ctx := context.Background()
	_, err := v.Verify(ctx, p.sign(t, "rsa-1", jwa.RS256(), p.claims(now), nil))
	require.NoError(t, err)
	require.EqualValues(t, 1, p.fetches.Load())
	for range 50 {
		_, err = v.Verify(ctx, p.sign(t, "nope", jwa.ES256(), p.claims(now), mustEC(t)))
		require.ErrorIs(t, err, ErrInvalidToken)
	}
	require.EqualValues(t, 1, p.fetches.Load(), "within minRefresh no fetch")
	p.addKey(t, "rsa-2", mustRSA(t), jwa.RS256())
	rotated := p.sign(t, "rsa-2", jwa.RS256(), p.claims(now), nil)
	_, err = v.Verify(ctx, rotated)
	require.ErrorIs(t, err, ErrInvalidToken, "not fetched again yet")
	now = now.Add(11 * time.Second)
	_, err = v.Verify(ctx, rotated)
	require.NoError(t, err, "the rotated key is fetched")
	require.EqualValues(t, 2, p.fetches.Load())
}

func TestMetadataMustNameTheIssuer(t *testing.T) {
	p := newProvider(t)
	p.issuer = "https://evil.example"
	v := newTestVerifier(t, p, time.Now)
	_, err := v.Verify(context.Background(), p.sign(t, "rsa-1", jwa.RS256(), p.claims(time.Now()), nil))
	require.ErrorIs(t, err, ErrInvalidToken)
	require.Contains(t, err.Error(), `names issuer "https://evil.example"`)
}

func TestNewVerifierRefusesWeakAlgorithms(t *testing.T) {
	for _, alg := range []string{"none", "HS256", "RS1"} {
		_, err := NewVerifier(Config{Issuer: "https://idp.example", Audience: audience, Algorithms: []string{alg}})
		require.Error(t, err, alg)
	}
}

func TestChallenge(t *testing.T) {
	const meta = "https://tools.example/.well-known/oauth-protected-resource/mcp"
	status, h := Challenge(meta, nil, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, `Bearer resource_metadata="`+meta+`"`, h)
	status, h = Challenge(meta, invalid("bad \"sig\"\n"), nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, `Bearer resource_metadata="`+meta+`", error="invalid_token", error_description="bad 'sig''"`, h)
	status, h = Challenge(meta, ErrInsufficientScope, []string{"mcp:tools", "mcp:admin"})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, `Bearer resource_metadata="`+meta+`", error="insufficient_scope", scope="mcp:tools mcp:admin"`, h)
}

// TestVerifiedTokensAreCachedButStillExpire: a token sent again is not
// verified again, yet its exp still holds, and another token is not
// taken for it.
func TestVerifiedTokensAreCachedButStillExpire(t *testing.T) {
	p := newProvider(t)
	now := time.Now()
	v := newTestVerifier(t, p, func() time.Time { return now })
	ctx := context.Background()
	c := p.claims(now)
	c["exp"] = now.Add(time.Minute).Unix()
	tok := p.sign(t, "rsa-1", jwa.RS256(), c, nil)
	first, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	again, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	require.Same(t, first, again, "served from the cache")
	_, err = v.Verify(ctx, tamperSignature(tok))
	require.ErrorIs(t, err, ErrInvalidToken, "a changed token is verified afresh")
	now = now.Add(time.Minute + 31*time.Second)
	_, err = v.Verify(ctx, tok)
	require.ErrorIs(t, err, ErrInvalidToken, "a cached token expires too")
}

func tamperSignature(tok string) string {
	b := []byte(tok)
	i := len(b) - 10
	b[i] ^= 'A' ^ 'B'
	return string(b)
}

// BenchmarkVerifyCachedRS256 is the steady state: a client sends the
// same access token with each request.
func BenchmarkVerifyCachedRS256(b *testing.B) { benchVerify(b, "rsa-1", jwa.RS256(), true) }

// BenchmarkVerifySignatureRS256 and ES256 are a token's first use: the
// signature and claims are checked (the keys are cached).
func BenchmarkVerifySignatureRS256(b *testing.B) { benchVerify(b, "rsa-1", jwa.RS256(), false) }
func BenchmarkVerifySignatureES256(b *testing.B) { benchVerify(b, "ec-1", jwa.ES256(), false) }
func BenchmarkVerifySignatureRS256Key4096(b *testing.B) {
	benchVerify(b, "rsa-4096", jwa.RS256(), false)
}

func benchVerify(b *testing.B, kid string, alg jwa.SignatureAlgorithm, cached bool) {
	p := newProvider(b)
	k, err := rsa.GenerateKey(rand.Reader, 4096)
	require.NoError(b, err)
	p.addKey(b, "rsa-4096", k, jwa.RS256())
	v := newTestVerifier(b, p, time.Now)
	tok := p.sign(b, kid, alg, p.claims(time.Now()), nil)
	ctx := context.Background()
	_, err = v.Verify(ctx, tok)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if cached {
			_, err = v.Verify(ctx, tok)
		} else {
			_, err = v.verify(ctx, tok, [32]byte{}, time.Now())
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
