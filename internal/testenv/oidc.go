package testenv

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// OIDC is the pair of real OpenID Providers scripts/services runs
// (services.d/hydra.sh): Issuer, whose tokens a test server trusts, and
// OtherIssuer, whose tokens it must refuse. Their clients share Secret.
type OIDC struct {
	Issuer, OtherIssuer, Secret string
	// Admin is Issuer's admin API.
	Admin string
}

// Audience is the resource the providers' clients may ask tokens for;
// OtherAudience is another server's.
const (
	Audience      = "https://toolwarden.test/mcp"
	OtherAudience = "https://other.test/mcp"
)

// NeedOIDC returns the providers, or calls Missing.
func NeedOIDC(t testing.TB) *OIDC {
	t.Helper()
	v := Need(t, "TOOLWARDEN_TEST_OIDC_ISSUER", "TOOLWARDEN_TEST_OIDC_OTHER_ISSUER", "TOOLWARDEN_TEST_OIDC_CLIENT_SECRET",
		"TOOLWARDEN_TEST_OIDC_ADMIN")
	return &OIDC{Issuer: v[0], OtherIssuer: v[1], Secret: v[2], Admin: v[3]}
}

// Client registers a client_credentials client of Issuer for one test,
// allowed scopes mcp:tools and mcp:admin and the given audiences (a
// test server's URL is known only once it listens), with Secret as its
// secret; it is deleted when t ends.
func (o *OIDC) Client(t testing.TB, audiences ...string) string {
	t.Helper()
	return o.client(t, nil, audiences)
}

// OpaqueClient is Client whose access tokens are opaque, for
// introspection (Hydra's admin API introspects them: Introspect).
func (o *OIDC) OpaqueClient(t testing.TB, audiences ...string) string {
	t.Helper()
	return o.client(t, map[string]any{"access_token_strategy": "opaque"}, audiences)
}

// Introspect is Issuer's RFC 7662 endpoint (on its admin API).
func (o *OIDC) Introspect() string { return o.Admin + "/admin/oauth2/introspect" }

func (o *OIDC) client(t testing.TB, extra map[string]any, audiences []string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := "tw-test-" + hex.EncodeToString(b[:])
	spec := map[string]any{"client_id": id, "client_secret": o.Secret, "grant_types": []string{"client_credentials"},
		"scope": "mcp:tools mcp:admin", "audience": audiences, "token_endpoint_auth_method": "client_secret_basic"}
	for k, v := range extra {
		spec[k] = v
	}
	body, _ := json.Marshal(spec)
	res, err := http.Post(o.Admin+"/admin/clients", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("registering a client: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("registering a client: %s", res.Status)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, o.Admin+"/admin/clients/"+id, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	})
	return id
}

// Token gets an access token from issuer with the client_credentials
// grant for client (toolwarden-cc, toolwarden-cc-bob or
// toolwarden-cc-short), asking for scope and audience.
func (o *OIDC) Token(t testing.TB, issuer, client, scope, audience string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "audience": {audience}}
	req, err := http.NewRequest(http.MethodPost, issuer+"/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, o.Secret)
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("token from %s: %v", issuer, err)
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.AccessToken == "" {
		t.Fatalf("token from %s for %s: %s %v %s", issuer, client, res.Status, err, body.Error)
	}
	return body.AccessToken
}
