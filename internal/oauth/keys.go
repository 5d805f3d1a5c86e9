package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/toolwarden/toolwarden/internal/strictjson"
)

// keySource holds the issuer's signing keys: its metadata is discovered
// once, its JWKS fetched and cached, and fetched again when a token names
// a key it does not hold (the provider rotated keys), or when the cache
// is older than maxAge. Fetches are at least minRefresh apart, so a flood
// of tokens naming invented key IDs costs the provider one request per
// minRefresh, not one per token.
type keySource struct {
	issuer     string
	client     *http.Client
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time

	mu      sync.Mutex
	meta    *providerMetadata
	keys    jwk.Set
	fetched time.Time // when keys were last fetched (or tried)
	// fetchErr is why the last fetch failed, told to tokens until the
	// next one is due.
	fetchErr error
	// discovered is when the metadata was last asked for.
	discovered time.Time
}

// providerMetadata is what toolwarden reads of the issuer's metadata
// (OpenID Connect Discovery, or RFC 8414).
type providerMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// maxMetadataBytes bounds what is read of the provider's answers.
const maxMetadataBytes = 1 << 20

// key returns the key named kid, fetching the JWKS when it is not held
// and the last fetch is old enough.
func (s *keySource) key(ctx context.Context, kid string) (jwk.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.keys != nil {
		if k, ok := lookup(s.keys, kid); ok && now.Sub(s.fetched) < s.maxAge {
			return k, nil
		}
	}
	if s.fetched.IsZero() || now.Sub(s.fetched) >= s.minRefresh {
		s.fetched = now
		s.fetchErr = s.fetch(ctx)
	}
	if s.keys == nil {
		// No set was ever fetched: until the next try is due, every
		// token gets the last failure, not a lookup in a nil set.
		return nil, fmt.Errorf("%w (retried at most every %s)", s.fetchErr, s.minRefresh)
	}
	if k, ok := lookup(s.keys, kid); ok {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q in the issuer's JWKS", kid)
}

// lookup finds kid; a token without one may use the set's only key.
func lookup(set jwk.Set, kid string) (jwk.Key, bool) {
	if kid == "" {
		if set.Len() == 1 {
			return set.Key(0)
		}
		return nil, false
	}
	return set.LookupKeyID(kid)
}

// metadata returns the provider's metadata, discovering it once (a
// failure is retried at most every minRefresh).
func (s *keySource) metadata(ctx context.Context) (*providerMetadata, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.discover(ctx); err != nil {
		return nil, err
	}
	return s.meta, nil
}

// discover reads the metadata unless it is known; s.mu is held.
func (s *keySource) discover(ctx context.Context) error {
	if s.meta != nil {
		return nil
	}
	now := s.now()
	if !s.discovered.IsZero() && now.Sub(s.discovered) < s.minRefresh {
		return errors.New("the issuer's metadata could not be read; retrying shortly")
	}
	s.discovered = now
	m, err := discover(ctx, s.client, s.issuer)
	if err != nil {
		return err
	}
	s.meta = m
	return nil
}

// fetch discovers the metadata (once) and fetches the JWKS; s.mu is held.
func (s *keySource) fetch(ctx context.Context) error {
	if err := s.discover(ctx); err != nil {
		return err
	}
	set, err := jwk.Fetch(ctx, s.meta.JWKSURI, jwk.WithHTTPClient(s.client), jwk.WithMaxFetchBodySize(maxMetadataBytes))
	if err != nil {
		return fmt.Errorf("fetching the issuer's JWKS: %w", err)
	}
	s.keys = set
	return nil
}

// discover reads the issuer's metadata, from the OpenID Connect location
// and then the RFC 8414 one, and checks it names the issuer itself (a
// provider must not speak for another).
func discover(ctx context.Context, client *http.Client, issuer string) (*providerMetadata, error) {
	base := strings.TrimSuffix(issuer, "/")
	var errs []string
	for _, u := range []string{base + "/.well-known/openid-configuration", wellKnownAS(issuer)} {
		m, err := getMetadata(ctx, client, u)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if m.Issuer != issuer {
			return nil, fmt.Errorf("the metadata at %s names issuer %q, not %q", u, m.Issuer, issuer)
		}
		if m.JWKSURI == "" {
			return nil, fmt.Errorf("the metadata at %s has no jwks_uri", u)
		}
		return m, nil
	}
	return nil, fmt.Errorf("discovering issuer %s: %s", issuer, strings.Join(errs, "; "))
}

// wellKnownAS is the RFC 8414 metadata URL: the well-known part goes
// between the host and the issuer's path.
func wellKnownAS(issuer string) string {
	scheme, rest, _ := strings.Cut(issuer, "://")
	host, path, _ := strings.Cut(rest, "/")
	return scheme + "://" + host + "/.well-known/oauth-authorization-server" + strings.TrimSuffix("/"+path, "/")
}

func getMetadata(ctx context.Context, client *http.Client, u string) (*providerMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", u, res.Status)
	}
	var m providerMetadata
	if err := readStrict(res.Body, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &m, nil
}

// readStrict decodes a provider's answer (at most maxMetadataBytes) with
// exact member names, each once, skipping the members not read: which
// issuer or introspection verdict counts must not depend on the reader.
func readStrict(r io.Reader, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, maxMetadataBytes+1))
	if err != nil {
		return err
	}
	if len(b) > maxMetadataBytes {
		return fmt.Errorf("the answer is over %d bytes", maxMetadataBytes)
	}
	return strictjson.UnmarshalOpen(b, v)
}
