package testenv

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
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

// PKCERedirect is the redirect URI of the public client toolwarden-pkce.
const PKCERedirect = "http://127.0.0.1:33418/callback"

// PKCEToken runs the authorization code flow with PKCE (S256) for the
// public client toolwarden-pkce, as a person named subject: Hydra's login
// and consent steps, which a login page would do, are accepted through
// its admin API; the browser's part is an HTTP client with a cookie jar
// that stops at each redirect.
func (o *OIDC) PKCEToken(t testing.TB, subject, scope, audience string) string {
	t.Helper()
	var b [32]byte
	_, _ = rand.Read(b[:])
	verifier := base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {"toolwarden-pkce"}, "response_type": {"code"}, "scope": {scope},
		"redirect_uri": {PKCERedirect}, "state": {"state-0123456789"}, "audience": {audience},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	browser := newBrowser(t)
	login := browser.redirect(t, o.Issuer+"/oauth2/auth?"+q.Encode())
	next := o.accept(t, "login", login.Query().Get("login_challenge"), map[string]any{"subject": subject})
	consent := browser.redirect(t, next)
	next = o.accept(t, "consent", consent.Query().Get("consent_challenge"), map[string]any{
		"grant_scope": strings.Fields(scope), "grant_access_token_audience": []string{audience}})
	done := browser.redirect(t, next)
	code := done.Query().Get("code")
	if code == "" {
		t.Fatalf("authorization code flow: no code in %s", done)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {PKCERedirect},
		"client_id": {"toolwarden-pkce"}, "code_verifier": {verifier}}
	res, err := http.PostForm(o.Issuer+"/oauth2/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.AccessToken == "" {
		t.Fatalf("code exchange: %s %v", res.Status, err)
	}
	return body.AccessToken
}

// accept accepts a login or consent challenge through the admin API and
// returns where the browser goes next.
func (o *OIDC) accept(t testing.TB, step, challenge string, body map[string]any) string {
	t.Helper()
	if challenge == "" {
		t.Fatalf("authorization code flow: no %s challenge", step)
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPut, o.Admin+"/admin/oauth2/auth/requests/"+step+"/accept?"+step+"_challenge="+url.QueryEscape(challenge), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.RedirectTo == "" {
		t.Fatalf("accepting the %s: %s %v", step, res.Status, err)
	}
	return out.RedirectTo
}

// browser follows no redirect, keeping cookies, as the flow's steps need.
type browser struct{ c *http.Client }

func newBrowser(t testing.TB) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// redirect GETs u and returns where it redirects to.
func (b *browser) redirect(t testing.TB, u string) *url.URL {
	t.Helper()
	res, err := b.c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := res.Location()
	if err != nil {
		t.Fatalf("authorization code flow: %s answered %s without a redirect", u, res.Status)
	}
	return loc
}
