// Package oauth makes toolwarden an OAuth 2.1 resource server, as the MCP
// authorization specification describes: it validates the JWT access
// tokens an identity provider issued for this server, and serves the
// protected-resource metadata (RFC 9728) clients discover it by.
//
// Signatures and claims are checked by github.com/lestrrat-go/jwx; this
// package chooses what is accepted: only the configured issuer, only
// tokens whose audience names this server (no token passthrough), only
// asymmetric algorithms from an allowlist (never none, never HMAC keyed
// with a public key), exp and nbf with a small skew.
package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

// Config is what a Verifier accepts.
type Config struct {
	// Issuer is the identity provider's issuer URL, exactly as its
	// metadata and its tokens' iss claim say it.
	Issuer string
	// Audience is this server's resource identifier: a token's aud must
	// contain it.
	Audience string
	// Scopes must all be granted to a token (its scope or scp claim).
	Scopes []string
	// Algorithms are the accepted signature algorithms; empty means
	// DefaultAlgorithms.
	Algorithms []string
	// ClockSkew is how far exp and nbf may be off; zero is none.
	ClockSkew time.Duration
	// HTTPClient fetches the provider's metadata and keys; nil means one
	// with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Introspection, when set, validates opaque (non-JWT) tokens by
	// asking the provider (RFC 7662).
	Introspection *Introspection
}

// DefaultAlgorithms are the asymmetric JWS algorithms accepted by default.
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Refusals a caller answers differently: 401 invalid_token, 403
// insufficient_scope.
var (
	ErrInvalidToken      = errors.New("invalid_token")
	ErrInsufficientScope = errors.New("insufficient_scope")
)

// Principal is who a valid token speaks for.
type Principal struct {
	Issuer, Subject, ClientID string
	Scopes                    []string
	// Claims are the token's claims, for identity rules to match.
	Claims map[string]any
}

// Name is the identity limits are counted under and the audit log shows:
// the subject and its issuer, as a subject is unique only within it.
func (p Principal) Name() string {
	return "oauth:" + p.Subject + "@" + p.Issuer
}

// Verifier validates access tokens of one issuer for one audience.
type Verifier struct {
	cfg   Config
	algs  []string
	keys  *keySource
	cache *tokenCache
}

// NewVerifier checks cfg; the provider is first contacted by the first
// Verify, so a provider that is down does not stop the server starting.
func NewVerifier(cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oauth: issuer and audience are required")
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms
	}
	for _, a := range algs {
		if !slices.Contains(DefaultAlgorithms, a) {
			return nil, fmt.Errorf("oauth: algorithm %q is not accepted (only %s)", a, strings.Join(DefaultAlgorithms, ", "))
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ks := &keySource{issuer: cfg.Issuer, client: cfg.HTTPClient, minRefresh: 10 * time.Second, maxAge: time.Hour, now: cfg.Now}
	return &Verifier{cfg: cfg, algs: algs, keys: ks, cache: newTokenCache(cacheMaxTokens)}, nil
}

// Issuer is the issuer whose tokens are accepted.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// Audience is this server's resource identifier.
func (v *Verifier) Audience() string { return v.cfg.Audience }

// Scopes are the scopes every token must carry.
func (v *Verifier) Scopes() []string { return v.cfg.Scopes }

// Verify validates raw and returns its principal. Its errors wrap
// ErrInvalidToken or ErrInsufficientScope, with a reason safe to show.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Principal, error) {
	key, now := sha256.Sum256([]byte(raw)), v.cfg.Now()
	p := v.cache.get(key, now, v.cfg.ClockSkew)
	if p == nil {
		var err error
		if p, err = v.verify(ctx, raw, key, now); err != nil {
			return nil, err
		}
	}
	for _, s := range v.cfg.Scopes {
		if !slices.Contains(p.Scopes, s) {
			return p, fmt.Errorf("%w: the token lacks scope %q", ErrInsufficientScope, s)
		}
	}
	return p, nil
}

// verify checks raw's signature and claims, and caches it when valid.
func (v *Verifier) verify(ctx context.Context, raw string, cacheKey [sha256.Size]byte, now time.Time) (*Principal, error) {
	h, err := header(raw)
	if errors.Is(err, errNotJWT) && v.cfg.Introspection != nil {
		return v.introspect(ctx, raw, cacheKey, now)
	}
	if err != nil {
		return nil, invalid("%v", err)
	}
	if !slices.Contains(v.algs, h.Alg) {
		return nil, invalid("algorithm %q is not accepted", h.Alg)
	}
	alg, _ := jwa.LookupSignatureAlgorithm(h.Alg)
	key, err := v.keys.key(ctx, h.Kid)
	if err != nil {
		return nil, invalid("%v", err)
	}
	if ka, ok := key.Algorithm(); ok && ka.String() != h.Alg {
		return nil, invalid("key %q is for %s, the token says %s", h.Kid, ka, h.Alg)
	}
	if err := checkClaims(raw); err != nil {
		return nil, invalid("%v", err)
	}
	tok, err := jwt.Parse([]byte(raw), jwt.WithKey(alg, key), jwt.WithValidate(true),
		jwt.WithIssuer(v.cfg.Issuer), jwt.WithAudience(v.cfg.Audience),
		jwt.WithAcceptableSkew(v.cfg.ClockSkew), jwt.WithClock(jwt.ClockFunc(v.cfg.Now)),
		jwt.WithRequiredClaim(jwt.ExpirationKey), jwt.WithRequiredClaim(jwt.SubjectKey))
	if err != nil {
		return nil, invalid("%s", reason(err))
	}
	p := principal(tok)
	exp, _ := tok.Expiration()
	nbf, _ := tok.NotBefore()
	v.cache.put(cacheKey, p, exp, nbf, now, cacheTTL)
	return p, nil
}

// reasons name, for the client, why jwx refused a token; the first that
// matches is said.
var reasons = []struct {
	is   func() error
	text string
}{
	{jwt.TokenExpiredError, "the token has expired (exp)"},
	{jwt.TokenNotYetValidError, "the token is not valid yet (nbf)"},
	{jwt.InvalidIssuerError, "the token is from another issuer (iss)"},
	{jwt.InvalidAudienceError, "the token is not for this resource (aud)"},
	{jwt.InvalidIssuedAtError, "the token was issued in the future (iat)"},
	{jwt.MissingRequiredClaimError, "the token lacks a required claim (exp, sub)"},
	{jws.VerificationError, "the signature does not verify"},
	{jws.VerifyError, "the signature does not verify"},
}

func reason(err error) string {
	for _, r := range reasons {
		if errors.Is(err, r.is()) {
			return r.text
		}
	}
	return "the token is malformed"
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

// jose is the part of a token's header read before verifying it: the
// algorithm is checked against the allowlist, and the key ID picks the key.
type jose struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// errNotJWT is a token of another shape than a signed JWT: an opaque
// token, for introspection.
var errNotJWT = errors.New("not a signed JWT")

func header(raw string) (jose, error) {
	var h jose
	if strings.Count(raw, ".") != 2 {
		return h, errNotJWT
	}
	b, err := base64.RawURLEncoding.DecodeString(raw[:strings.IndexByte(raw, '.')])
	if err != nil {
		return h, errors.New("malformed JWT header")
	}
	// Exact names, once each, as jwx reads them: {"alg":"ES256",
	// "ALG":"none"} must not pass the allowlist as one and verify as
	// the other.
	if err := strictjson.UnmarshalOpen(b, &h); err != nil {
		return h, errors.New("malformed JWT header")
	}
	return h, nil
}

// principal reads who the token speaks for. Scopes come from the scope
// claim (a space-separated string, RFC 9068) or scp (a list, as Ory Hydra
// and Okta issue).
func principal(tok jwt.Token) *Principal {
	p := &Principal{Claims: map[string]any{}}
	p.Issuer, _ = tok.Issuer()
	p.Subject, _ = tok.Subject()
	for _, k := range tok.Keys() {
		var v any
		if tok.Get(k, &v) == nil {
			p.Claims[k] = v
		}
	}
	p.ClientID, _ = p.Claims["client_id"].(string)
	if s, ok := p.Claims["scope"].(string); ok {
		p.Scopes = strings.Fields(s)
	}
	if l, ok := p.Claims["scp"].([]any); ok {
		for _, s := range l {
			if s, ok := s.(string); ok {
				p.Scopes = append(p.Scopes, s)
			}
		}
	}
	return p
}
