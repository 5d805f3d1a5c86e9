package oauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// tokenCache remembers tokens that verified, by their SHA-256, so that a
// client sending the same token with every request pays for its
// signature once (an RSA-4096 verification is ~0.2 ms; a lookup ~2 µs).
// A hit is still checked against exp and nbf at each use, and is kept at
// most cacheTTL, so a key the provider withdrew stops being trusted soon
// after. It holds at most max tokens: when full, an arbitrary one goes.
type tokenCache struct {
	mu  sync.Mutex
	m   map[[sha256.Size]byte]cachedToken
	max int
}

type cachedToken struct {
	p        *Principal
	exp, nbf time.Time
	until    time.Time // when the entry is dropped whatever exp says
}

const (
	cacheTTL       = 5 * time.Minute
	cacheMaxTokens = 10000
)

func newTokenCache(max int) *tokenCache {
	return &tokenCache{m: map[[sha256.Size]byte]cachedToken{}, max: max}
}

// get returns the principal of a token verified before and still within
// its validity at now (with skew).
func (c *tokenCache) get(key [sha256.Size]byte, now time.Time, skew time.Duration) *Principal {
	c.mu.Lock()
	e, ok := c.m[key]
	if ok && !now.Before(e.until) {
		delete(c.m, key)
		ok = false
	}
	c.mu.Unlock()
	if !ok || now.After(e.exp.Add(skew)) || (!e.nbf.IsZero() && now.Before(e.nbf.Add(-skew))) {
		return nil
	}
	return e.p
}

func (c *tokenCache) put(key [sha256.Size]byte, p *Principal, exp, nbf, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cachedToken{p: p, exp: exp, nbf: nbf, until: now.Add(ttl)}
}
