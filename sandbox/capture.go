package sandbox

import "sync"

// capture keeps the first max bytes written to it and calls overflow once
// when more arrive, so the caller can kill the producer instead of
// buffering an unbounded stream.
type capture struct {
	mu        sync.Mutex
	buf       []byte
	max       int
	truncated bool
	overflow  func()
}

func newCapture(max int, overflow func()) *capture {
	return &capture{max: max, overflow: overflow}
}

// Write never fails: the producer is stopped by overflow, not by a write
// error it might ignore or retry.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	room := c.max - len(c.buf)
	over := len(p) > room
	if over {
		c.buf = append(c.buf, p[:room]...)
	} else {
		c.buf = append(c.buf, p...)
	}
	first := over && !c.truncated
	if over {
		c.truncated = true
	}
	c.mu.Unlock()
	if first && c.overflow != nil {
		c.overflow()
	}
	return len(p), nil
}

// bytes returns what was kept and whether anything was dropped.
func (c *capture) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.truncated
}
