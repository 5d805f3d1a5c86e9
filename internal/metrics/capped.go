package metrics

import "sync"

// capped admits label values until it holds max distinct ones; later new
// values become Other. Rule names come from the configuration, so the cap
// is a guard against a bug, not a limit an operator meets.
type capped struct {
	mu   sync.RWMutex
	max  int
	seen map[string]bool
}

func newCapped(max int) *capped { return &capped{max: max, seen: map[string]bool{}} }

// label returns v, or Other once max other values were seen.
func (c *capped) label(v string) string {
	c.mu.RLock()
	ok := c.seen[v]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[v] {
		return v
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[v] = true
	return v
}
