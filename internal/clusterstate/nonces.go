package clusterstate

import (
	"fmt"
	"time"
)

// Consume marks a single-use token (an approval state's nonce) used until
// it expires. It reports false when any replica used it before; an error
// means the mark could not be set, and the token must not be honoured.
func (c *Client) Consume(nonce string, until time.Time) (bool, error) {
	ctx, cancel := op()
	defer cancel()
	ttl := time.Until(until)
	if ttl <= 0 {
		return false, nil
	}
	ok, err := c.rdb.SetNX(ctx, c.prefix+"n:"+nonce, 1, ttl+time.Second).Result()
	if err != nil {
		return false, fmt.Errorf("redis: %w", err)
	}
	return ok, nil
}
