package httpserve

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolwarden/toolwarden/configs"
	"github.com/toolwarden/toolwarden/internal/oauth"
)

// authenticator admits a request with a static bearer token (compared in
// constant time with every identity's) or, when OAuth is configured, a
// valid access token of its issuer, and passes the identity on in the
// request's context, so that limits follow the identity across sessions.
type authenticator struct {
	ids       []Identity
	wants     [][]byte
	oauth     *oauth.Verifier
	publicURL string
	// as is the server's Authenticated hook.
	as func(ctx context.Context, identity string, p *oauth.Principal) context.Context
}

func newAuthenticator(opts Options, as func(context.Context, string, *oauth.Principal) context.Context) *authenticator {
	a := &authenticator{ids: opts.identities(), oauth: opts.OAuth, publicURL: strings.TrimSuffix(opts.PublicURL, "/"), as: as}
	for _, id := range a.ids {
		a.wants = append(a.wants, []byte("Bearer "+id.Token))
	}
	return a
}

func (a *authenticator) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name := a.static(r); name != "" {
			next.ServeHTTP(w, r.WithContext(a.as(r.Context(), name, nil)))
			return
		}
		if a.oauth == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolwarden"`)
			http.Error(w, "unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		p, err := a.verify(r)
		if err != nil || p == nil {
			status, challenge := oauth.Challenge(a.metadataURL(r), err, a.oauth.Scopes())
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, http.StatusText(status)+": "+refusal(err), status)
			return
		}
		next.ServeHTTP(w, r.WithContext(a.as(r.Context(), p.Name(), p)))
	})
}

// static is the identity whose static token the request carries, or "".
func (a *authenticator) static(r *http.Request) string {
	got := []byte(r.Header.Get("Authorization"))
	name := ""
	for i, id := range a.ids {
		if id.Token != "" && subtle.ConstantTimeCompare(got, a.wants[i]) == 1 {
			name = id.Name
		}
	}
	return name
}

// verify returns the principal of the request's access token, or nil and
// no error for a request without a bearer token: its challenge carries no
// error code (RFC 6750 §3.1).
func (a *authenticator) verify(r *http.Request) (*oauth.Principal, error) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return nil, nil
	}
	return a.oauth.Verify(r.Context(), strings.TrimSpace(tok))
}

func refusal(err error) string {
	if err == nil {
		return "a bearer token is required (see WWW-Authenticate)"
	}
	return err.Error()
}

// metadataURL is where this resource's metadata is: RFC 9728's form, the
// well-known path followed by the resource's path (/mcp).
func (a *authenticator) metadataURL(r *http.Request) string {
	return baseURL(a.publicURL, r) + oauth.MetadataPath + PathStreamable
}

// baseURL is the public URL, or the request's scheme and Host (which
// checkHost has let through).
func baseURL(public string, r *http.Request) string {
	if public != "" {
		return public
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// withMetadata serves the protected-resource metadata, without a token,
// at its bare and path-suffixed locations, when OAuth is configured.
func withMetadata(opts Options, next http.Handler) http.Handler {
	if opts.OAuth == nil {
		return next
	}
	scopes := opts.OAuthScopes
	if len(scopes) == 0 {
		scopes = opts.OAuth.Scopes()
	}
	meta := oauth.MetadataHandler(opts.OAuth.Metadata(scopes))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == oauth.MetadataPath || r.URL.Path == oauth.MetadataPath+PathStreamable {
			meta.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// OAuthVerifier is the access-token verifier http.oauth configures, or
// nil when it sets no issuer.
func OAuthVerifier(h configs.HTTP) (*oauth.Verifier, error) {
	if !h.OAuth.Enabled() {
		return nil, nil
	}
	cfg := oauth.Config{
		Issuer: h.OAuth.Issuer, Audience: h.ResourceURL(), Scopes: h.OAuth.Scopes,
		Algorithms: h.OAuth.Algorithms, ClockSkew: h.OAuth.ClockSkew,
	}
	if in := h.OAuth.Introspection; in.Enabled {
		cfg.Introspection = &oauth.Introspection{Endpoint: in.Endpoint, ClientID: in.ClientID}
		if ref := in.ClientSecretRef(); ref.Set() {
			secret, err := in.Secret(context.Background(), ref)
			if err == nil && secret == "" {
				err = fmt.Errorf("%s is empty", ref)
			}
			if err != nil {
				return nil, err
			}
			cfg.Introspection.ClientSecret = secret
		}
	}
	return oauth.NewVerifier(cfg)
}
