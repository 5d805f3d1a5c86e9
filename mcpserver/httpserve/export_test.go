package httpserve

import "time"

// SetIdleConnTimeout sets how long Serve keeps an idle keep-alive
// connection, for a test; the returned func restores it.
func SetIdleConnTimeout(d time.Duration) func() {
	old := idleConnTimeout
	idleConnTimeout = d
	return func() { idleConnTimeout = old }
}
