package mcpserver_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"github.com/toolwarden/toolwarden/mcpserver"
	"github.com/toolwarden/toolwarden/oauth"
)

const benchAudience = "https://tools.example/mcp"

// localIssuer serves an issuer's metadata and JWKS and signs one access
// token with an RSA key of bits (Hydra's are 4096).
func localIssuer(b *testing.B, bits int) (issuer, token string) {
	key, err := rsa.GenerateKey(rand.Reader, bits)
	require.NoError(b, err)
	pub, err := jwk.PublicKeyOf(key)
	require.NoError(b, err)
	require.NoError(b, pub.Set(jwk.KeyIDKey, "k1"))
	require.NoError(b, pub.Set(jwk.AlgorithmKey, jwa.RS256()))
	set := jwk.NewSet()
	require.NoError(b, set.AddKey(pub))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jwks" {
			_ = json.NewEncoder(w).Encode(set)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks"})
	}))
	b.Cleanup(srv.Close)
	tok, err := jwt.NewBuilder().Issuer(srv.URL).Subject("bench").Audience([]string{benchAudience}).
		Expiration(time.Now().Add(time.Hour)).Claim("scope", "mcp:tools").Build()
	require.NoError(b, err)
	hdr := jws.NewHeaders()
	require.NoError(b, hdr.Set(jws.KeyIDKey, "k1"))
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), key, jws.WithProtectedHeaders(hdr)))
	require.NoError(b, err)
	return srv.URL, string(signed)
}

// benchHTTPCall measures one stateless (2026-07-28) tools/call of a
// 4 KiB read_file over real HTTP with token, on a server that accepts the
// static test token and the issuer's access tokens.
func benchHTTPCall(b *testing.B, static bool) {
	issuer, accessToken := localIssuer(b, 4096)
	v, err := oauth.NewVerifier(oauth.Config{Issuer: issuer, Audience: benchAudience, Scopes: []string{"mcp:tools"}})
	require.NoError(b, err)
	h, stop := benchServer(b).HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 64 << 10,
		MaxSessions: 10, IdleTimeout: time.Minute, OAuth: v})
	srv := httptest.NewServer(h)
	b.Cleanup(func() { stop(ctxT(b)); srv.Close() })
	token := accessToken
	if static {
		token = testToken
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}}`
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"},` + meta + `}}`)
	client := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcp.HeaderProtocolVersion, "2026-07-28")
		req.Header.Set(mcp.HeaderMethod, "tools/call")
		req.Header.Set(mcp.HeaderName, "read_file")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(out), "0123456789abcdef") {
			b.Fatalf("%s %.300s", res.Status, out)
		}
	}
}

// BenchmarkHTTPCallStaticToken and BenchmarkHTTPCallOAuthToken compare
// calls/s with a static token and with an RS256 (4096-bit) access token
// (verified once, then served from the verifier's cache), in one run.
func BenchmarkHTTPCallStaticToken(b *testing.B) { benchHTTPCall(b, true) }
func BenchmarkHTTPCallOAuthToken(b *testing.B)  { benchHTTPCall(b, false) }
