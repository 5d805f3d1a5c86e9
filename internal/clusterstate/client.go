// Package clusterstate keeps the state several toolwarden replicas behind
// a load balancer must share in one Redis or Valkey server: each
// identity's rate buckets (github.com/go-redis/redis_rate) and window
// counters (atomic Lua scripts), and the single-use marks of approval
// answers. Nothing here is a cluster of its own: Redis is the one source
// of truth, and when it cannot be reached the callers fail closed.
package clusterstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options say how to reach the server.
type Options struct {
	// URL is redis://host:port/db or rediss://host:port/db.
	URL      string
	Password string
	// Prefix starts every key, so that several deployments may share one
	// server; empty means "tw:".
	Prefix string
}

// opTimeout bounds one operation, waiting for a pooled connection
// included: a call waits at most this long on a server that does not
// answer before it is refused. A server that is down refuses the
// connection at once. Under a load that saturates the CPU a call may
// queue for a connection for a second or more; that is no reason to
// refuse it.
const opTimeout = 5 * time.Second

// Client is a connection pool to the server.
type Client struct {
	rdb    *redis.Client
	prefix string

	mu      sync.Mutex
	closers []func() error
}

// Open parses the URL and makes the pool; it does not dial (see Ping), so
// a replica starts while Redis is down and serves once it is back.
func Open(o Options) (*Client, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("cluster.redis_url: %w", err)
	}
	if o.Password != "" {
		opt.Password = o.Password
	}
	// Fail fast and once: a call refused with backend.unavailable is
	// better than one that hangs, and the client retries anyway. The pool
	// is wide, as each call in flight holds a connection for a round trip.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, 3*time.Second, 3*time.Second
	opt.MaxRetries = 1
	opt.PoolSize = 256
	// After a burst, all but a few idle connections are closed again.
	opt.MaxIdleConns = 32
	opt.PoolTimeout = opTimeout
	if o.Prefix == "" {
		o.Prefix = "tw:"
	}
	return &Client{rdb: redis.NewClient(opt), prefix: o.Prefix}, nil
}

// Ping checks the server answers and accepts the password.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return c.rdb.Ping(ctx).Err()
}

// Close stops the subscriptions and closes the pool.
func (c *Client) Close() error {
	c.mu.Lock()
	closers := c.closers
	c.closers = nil
	c.mu.Unlock()
	var errs []error
	for _, f := range closers {
		errs = append(errs, f())
	}
	return errors.Join(append(errs, c.rdb.Close())...)
}

// onClose runs f when the client closes.
func (c *Client) onClose(f func() error) {
	c.mu.Lock()
	c.closers = append(c.closers, f)
	c.mu.Unlock()
}

// op is the context of one operation.
func op() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// LogTo sends go-redis's own messages (a pool that cannot dial, a
// subscription that reconnects) to log at debug level instead of
// stderr: what matters to the operator is already logged and audited as
// backend.unavailable. It sets a process-wide logger.
func LogTo(log *slog.Logger) { redis.SetLogger(slogAdapter{log}) }

type slogAdapter struct{ log *slog.Logger }

func (a slogAdapter) Printf(ctx context.Context, format string, v ...any) {
	a.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
