// Package oauthtest is a fake identity provider for tests of the OAuth
// resource server, in process or through the built binary: it serves
// OpenID metadata and a JWKS over HTTP, can make the key fetch fail, and
// signs any claims exactly as given, so that a test can send what no real
// provider would issue (an empty sub, exp as a string).
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// KeyID names the provider's one signing key.
const KeyID = "test-es256"

// Provider is the fake identity provider; its issuer is its URL.
type Provider struct {
	URL string
	// KeyFetches counts requests for the JWKS.
	KeyFetches atomic.Int32

	key      *ecdsa.PrivateKey
	failKeys atomic.Bool
}

// New starts a provider, closed when t ends.
func New(t testing.TB) *Provider {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{key: key}
	pub := publicSet(t, key)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": p.URL, "jwks_uri": p.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.KeyFetches.Add(1)
		if p.failKeys.Load() {
			http.Error(w, "the key store is down", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(pub)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func publicSet(t testing.TB, key *ecdsa.PrivateKey) jwk.Set {
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{jwk.KeyIDKey: KeyID, jwk.AlgorithmKey: jwa.ES256()} {
		if err := pub.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		t.Fatal(err)
	}
	return set
}

// FailKeys makes the JWKS endpoint answer 500 (or recover).
func (p *Provider) FailKeys(fail bool) { p.failKeys.Store(fail) }

// Claims are valid claims for subject and audience, an hour long.
func (p *Provider) Claims(subject, audience string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": p.URL, "sub": subject, "aud": audience, "client_id": "oauthtest",
		"scope": "mcp:tools", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Sign returns a token carrying claims as encoding/json writes them (a
// string stays a string), signed with the provider's key.
func (p *Provider) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return p.SignPayload(t, payload)
}

// SignPayload signs payload byte for byte, for claims no map can hold
// (a duplicated member).
func (p *Provider) SignPayload(t testing.TB, payload []byte) string {
	t.Helper()
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, KeyID); err != nil {
		t.Fatal(err)
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		t.Fatal(err)
	}
	b, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), p.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
