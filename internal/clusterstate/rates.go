package clusterstate

import (
	"fmt"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/toolwarden/toolwarden/guard"
)

// rates are the identities' token buckets, one per rate limit in force,
// kept by redis_rate (GCRA on the server's clock, so the replicas' clocks
// need not agree).
type rates struct {
	c   *Client
	lim *redis_rate.Limiter
}

func newRates(c *Client) *rates { return &rates{c: c, lim: redis_rate.NewLimiter(c.rdb)} }

// limit is a rate of perMinute with burst b as redis_rate counts it: its
// rate is a whole number of events, so a fractional rate is scaled.
func limit(perMinute float64, b int) redis_rate.Limit {
	const scale = 1000
	burst := b
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perMinute)))
	}
	return redis_rate.Limit{Rate: max(1, int(math.Round(perMinute*scale))), Period: scale * time.Minute, Burst: burst}
}

// take takes one token of each bucket that applies and records the
// tokens there were before into st (below one: the guard denies).
func (r *rates) take(key string, l guard.Limits, applied []guard.ToolLimits, st *guard.State) error {
	return r.each(key, l, applied, st, 1)
}

// peek records the tokens of each bucket into st, taking none.
func (r *rates) peek(key string, l guard.Limits, applied []guard.ToolLimits, st *guard.State) error {
	return r.each(key, l, applied, st, 0)
}

func (r *rates) each(key string, l guard.Limits, applied []guard.ToolLimits, st *guard.State, n int) error {
	if l.RatePerMinute > 0 {
		tokens, err := r.allow(r.c.key("r", key), l.RatePerMinute, l.Burst, n)
		if err != nil {
			return err
		}
		st.Tokens = tokens
	}
	for _, t := range applied {
		if t.RatePerMinute <= 0 {
			continue
		}
		tokens, err := r.allow(r.c.key("r", key)+":"+t.Glob, t.RatePerMinute, t.Burst, n)
		if err != nil {
			return err
		}
		ts := st.Tools[t.Glob]
		ts.Tokens = tokens
		st.Tools[t.Glob] = ts
	}
	return nil
}

// allow takes n tokens (zero: none) and returns how many there were
// before, as the guard's rate check reads them: one or more when the
// call may pass, less than one otherwise, so far below one as the wait.
func (r *rates) allow(key string, perMinute float64, burst, n int) (float64, error) {
	ctx, cancel := op()
	defer cancel()
	res, err := r.lim.AllowN(ctx, key, limit(perMinute, burst), n)
	if err != nil {
		return 0, fmt.Errorf("redis: %w", err)
	}
	if n > 0 && res.Allowed == 0 || n == 0 && res.Remaining < 1 {
		wait := max(res.RetryAfter, 0).Seconds()
		return min(0.999, 1-wait*perMinute/60), nil
	}
	return float64(res.Remaining + n), nil
}
