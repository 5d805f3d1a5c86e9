package mcpserver

import "time"

// SetIdleConnTimeout sets how long ServeHTTP keeps an idle keep-alive
// connection, for a test; the returned func restores it.
func SetIdleConnTimeout(d time.Duration) func() {
	old := idleConnTimeout
	idleConnTimeout = d
	return func() { idleConnTimeout = old }
}

// EncodeAnswer is how stdio writes an answer (stdioCalls), for benchmarks.
var EncodeAnswer = encodeAnswer
