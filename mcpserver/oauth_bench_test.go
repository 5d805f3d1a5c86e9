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
	"github.com/toolwarden/toolwarden/internal/oauth"
	"github.com/toolwarden/toolwarden/mcpserver"
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

// httpCaller sends stateless (2026-07-28) tools/call requests of a
// 4 KiB read_file over real HTTP to a server that accepts the static test
// token and the issuer's access tokens.
type httpCaller struct {
	url    string
	client *http.Client
	body   []byte
}

func newHTTPCaller(b *testing.B, issuer string) *httpCaller {
	v, err := oauth.NewVerifier(oauth.Config{Issuer: issuer, Audience: benchAudience, Scopes: []string{"mcp:tools"}})
	require.NoError(b, err)
	h, stop := benchServer(b).HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 64 << 10,
		MaxSessions: 10, IdleTimeout: time.Minute, OAuth: v})
	srv := httptest.NewServer(h)
	b.Cleanup(func() { stop(ctxT(b)); srv.Close() })
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}}`
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"bench.txt"},` + meta + `}}`)
	return &httpCaller{url: srv.URL + "/mcp", client: srv.Client(), body: body}
}

func (c *httpCaller) call(b *testing.B, token string) {
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(c.body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, "read_file")
	res, err := c.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(out), "0123456789abcdef") {
		b.Fatalf("%s %.300s", res.Status, out)
	}
}

// BenchmarkHTTPCallStaticVsOAuth compares calls/s with a static token and
// with an RS256 (4096-bit, as Hydra's) access token in one run: each
// iteration makes one call of each, in turn and in alternating order, so
// that both see the same machine load. It reports each one's time per call and the OAuth calls/s
// as a share of the static ones (oauth/static, target >= 0.9).
func BenchmarkHTTPCallStaticVsOAuth(b *testing.B) {
	issuer, accessToken := localIssuer(b, 4096)
	c := newHTTPCaller(b, issuer)
	c.call(b, accessToken) // the first use verifies the signature
	var static, withOAuth time.Duration
	timed := func(token string) time.Duration {
		t0 := time.Now()
		c.call(b, token)
		return time.Since(t0)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 { // which goes first alternates, so neither gains from the order
			static += timed(testToken)
			withOAuth += timed(accessToken)
		} else {
			withOAuth += timed(accessToken)
			static += timed(testToken)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(static.Nanoseconds())/n, "static-ns/call")
	b.ReportMetric(float64(withOAuth.Nanoseconds())/n, "oauth-ns/call")
	b.ReportMetric(float64(static)/float64(withOAuth), "oauth/static")
}

// BenchmarkHTTPAuthStaticToken and BenchmarkHTTPAuthOAuthToken measure the
// HTTP layer's checks alone (Host, Origin, authentication) on a request
// that then finds nothing (404), without a network or a tool call: the
// cost an access token adds to every request, next to a static token's.
func BenchmarkHTTPAuthStaticToken(b *testing.B) { benchAuth(b, true) }
func BenchmarkHTTPAuthOAuthToken(b *testing.B)  { benchAuth(b, false) }

func benchAuth(b *testing.B, static bool) {
	issuer, token := localIssuer(b, 4096)
	v, err := oauth.NewVerifier(oauth.Config{Issuer: issuer, Audience: benchAudience, Scopes: []string{"mcp:tools"}})
	require.NoError(b, err)
	h, stop := benchServer(b).HTTPHandler(mcpserver.HTTPOptions{Token: testToken, MaxBodyBytes: 1 << 10, MaxSessions: 1,
		IdleTimeout: time.Minute, OAuth: v})
	b.Cleanup(func() { stop(ctxT(b)) })
	if static {
		token = testToken
	}
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/nothing-here", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNotFound {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
