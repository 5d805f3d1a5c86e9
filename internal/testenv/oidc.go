package testenv

import (
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
	v := Need(t, "TOOLWARDEN_TEST_OIDC_ISSUER", "TOOLWARDEN_TEST_OIDC_OTHER_ISSUER", "TOOLWARDEN_TEST_OIDC_CLIENT_SECRET")
	return &OIDC{Issuer: v[0], OtherIssuer: v[1], Secret: v[2]}
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
