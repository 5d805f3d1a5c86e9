package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/stretchr/testify/require"
)

// Issuer is an OAuth issuer of the test's own, on loopback: its metadata,
// its key set and a key that signs whatever claims a test asks for. It
// plays the malicious or careless identity provider that Hydra, a real
// one, will not be made to play (a subject with control characters).
type Issuer struct {
	URL string
	key *ecdsa.PrivateKey
}

// LocalIssuer starts an Issuer that lives as long as t.
func LocalIssuer(t testing.TB) *Issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pub, err := jwk.PublicKeyOf(key)
	require.NoError(t, err)
	require.NoError(t, pub.Set(jwk.KeyIDKey, "k1"))
	require.NoError(t, pub.Set(jwk.AlgorithmKey, jwa.ES256()))
	set := jwk.NewSet()
	require.NoError(t, set.AddKey(pub))
	iss := &Issuer{key: key}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jwks" {
			_ = json.NewEncoder(w).Encode(set)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks"})
	}))
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	return iss
}

// Token signs an access token for subject, with scope, for audience,
// valid for an hour.
func (iss *Issuer) Token(t testing.TB, subject, scope, audience string) string {
	t.Helper()
	tok, err := jwt.NewBuilder().Issuer(iss.URL).Subject(subject).Audience([]string{audience}).
		IssuedAt(time.Now()).Expiration(time.Now().Add(time.Hour)).Claim("scope", scope).Build()
	require.NoError(t, err)
	hdr := jws.NewHeaders()
	require.NoError(t, hdr.Set(jws.KeyIDKey, "k1"))
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), iss.key, jws.WithProtectedHeaders(hdr)))
	require.NoError(t, err)
	return string(signed)
}
