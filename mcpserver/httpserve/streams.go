package httpserve

import (
	"context"
	"net/http"
	"strconv"
	"sync"
)

// streamCap bounds the event streams (GET /mcp, GET /sse) each identity
// holds open at once: a client that opens streams and never closes them
// (one was seen holding a GET /mcp for 40 minutes) cannot pin the
// server's connections for everyone.
type streamCap struct {
	max   int
	owner func(context.Context) string // Server.Owner
	mu    sync.Mutex
	open  map[string]int
}

func newStreamCap(max int, owner func(context.Context) string) *streamCap {
	return &streamCap{max: max, owner: owner, open: map[string]int{}}
}

// acquire takes a stream for who; false when who holds max already.
func (c *streamCap) acquire(who string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[who] >= c.max {
		return false
	}
	c.open[who]++
	return true
}

func (c *streamCap) release(who string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[who]--; c.open[who] <= 0 {
		delete(c.open, who)
	}
}

// wrap holds a stream of the request's identity for as long as a GET is
// served, answering 429 Too Many Requests over the cap. Other methods
// pass through.
func (c *streamCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || c.max <= 0 {
			next.ServeHTTP(w, r)
			return
		}
		who := c.owner(r.Context())
		if !c.acquire(who) {
			w.Header().Set("Retry-After", "10")
			http.Error(w, "too many open event streams for this identity (http.max_streams_per_identity = "+
				strconv.Itoa(c.max)+"); close one first", http.StatusTooManyRequests)
			return
		}
		defer c.release(who)
		next.ServeHTTP(w, r)
	})
}
