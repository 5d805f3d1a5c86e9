package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Introspection configures RFC 7662 token introspection, for the opaque
// (non-JWT) access tokens some providers issue.
type Introspection struct {
	// Endpoint is the provider's introspection endpoint; empty means the
	// one its metadata names.
	Endpoint string
	// ClientID and ClientSecret authenticate this server to it (HTTP
	// basic); empty sends no credentials (an endpoint on a private
	// network, as Hydra's admin API).
	ClientID, ClientSecret string
}

// introspectionTTL is how long an active answer is cached: a revoked
// opaque token is refused again within it.
const introspectionTTL = time.Minute

// introspected is the part of an RFC 7662 answer that is checked.
type introspected struct {
	Active   bool           `json:"active"`
	Scope    string         `json:"scope"`
	ClientID string         `json:"client_id"`
	Sub      string         `json:"sub"`
	Iss      string         `json:"iss"`
	Exp      int64          `json:"exp"`
	Nbf      int64          `json:"nbf"`
	Aud      jsontext.Value `json:"aud"`
}

// introspect asks the provider about an opaque token and checks the
// answer as a JWT's claims are: active, this issuer, this audience (a
// token without one is refused: no passthrough), exp, nbf and a subject.
func (v *Verifier) introspect(ctx context.Context, raw string, key [sha256.Size]byte, now time.Time) (*Principal, error) {
	endpoint, err := v.introspectionEndpoint(ctx)
	if err != nil {
		return nil, invalid("%v", err)
	}
	ans, err := v.askIntrospection(ctx, endpoint, raw)
	if err != nil {
		return nil, invalid("introspection failed: %v", err)
	}
	skew := v.cfg.ClockSkew
	switch {
	case !ans.Active:
		return nil, invalid("the token is not active")
	case ans.Iss != "" && ans.Iss != v.cfg.Issuer:
		return nil, invalid("the token is from another issuer (iss)")
	case !slices.Contains(audiences(ans.Aud), v.cfg.Audience):
		return nil, invalid("the token is not for this resource (aud)")
	case ans.Exp == 0 || now.After(time.Unix(ans.Exp, 0).Add(skew)):
		return nil, invalid("the token has expired (exp)")
	case ans.Nbf != 0 && now.Before(time.Unix(ans.Nbf, 0).Add(-skew)):
		return nil, invalid("the token is not valid yet (nbf)")
	case strings.TrimSpace(ans.Sub) == "":
		return nil, invalid("the token lacks a required claim (exp, sub)")
	}
	p := &Principal{Issuer: v.cfg.Issuer, Subject: ans.Sub, ClientID: ans.ClientID, Scopes: strings.Fields(ans.Scope),
		Claims: map[string]any{"sub": ans.Sub, "client_id": ans.ClientID, "scope": ans.Scope}}
	exp := time.Unix(ans.Exp, 0)
	v.cache.put(key, p, exp, time.Time{}, now, introspectionTTL)
	return p, nil
}

func (v *Verifier) introspectionEndpoint(ctx context.Context) (string, error) {
	if e := v.cfg.Introspection.Endpoint; e != "" {
		return e, nil
	}
	m, err := v.keys.metadata(ctx)
	if err != nil {
		return "", err
	}
	if m.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("the issuer's metadata names no introspection_endpoint; set http.oauth.introspection.endpoint")
	}
	return m.IntrospectionEndpoint, nil
}

func (v *Verifier) askIntrospection(ctx context.Context, endpoint, raw string) (*introspected, error) {
	form := url.Values{"token": {raw}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in := v.cfg.Introspection; in.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	}
	res, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the introspection endpoint answered %s", res.Status)
	}
	var ans introspected
	if err := readStrict(res.Body, &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// audiences reads aud, a string or a list of strings.
func audiences(raw jsontext.Value) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}
