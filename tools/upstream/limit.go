package upstream

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/toolwarden/toolwarden/configs"
)

// DefaultMaxMessageBytes caps one message of an upstream (a stdio line, an
// HTTP response body or event) when upstreams[].max_message_bytes is
// unset.
const DefaultMaxMessageBytes = 4 << 20

// MessageTooLargeError is what ends a connection whose upstream sent a
// message longer than the cap: a stdio upstream's line, a url upstream's
// response body or event (Remote).
type MessageTooLargeError struct {
	Max    int
	Remote bool
}

func (e *MessageTooLargeError) Error() string {
	what := "the connection was cut and the process killed"
	if e.Remote {
		what = "the response was cut unread"
	}
	return fmt.Sprintf("it sent a message longer than %d bytes (upstreams[].max_message_bytes); %s", e.Max, what)
}

// maxMessageBytes is u's cap of one message.
func maxMessageBytes(u configs.Upstream) int {
	if u.MaxMessageBytes <= 0 {
		return DefaultMaxMessageBytes
	}
	return u.MaxMessageBytes
}

// lineLimit passes a stdio upstream's output on and fails once a line
// grows past max bytes, so that mcp-go's client, which reads a line
// without a bound, never holds more than max bytes of one message. The
// first time it fails it calls over (which kills the process).
type lineLimit struct {
	r    io.Reader
	max  int
	n    int // bytes since the last newline
	over func()

	mu  sync.Mutex
	err *MessageTooLargeError
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if err := l.exceeded(); err != nil {
		return 0, err
	}
	n, err := l.r.Read(p)
	// Line by line with IndexByte, not byte by byte: an answer of a few
	// KiB cost microseconds here (perf, scripts/bench/upstream.sh).
	for off := 0; off < n; {
		end := n
		if i := bytes.IndexByte(p[off:n], '\n'); i >= 0 {
			end = off + i
		}
		if l.n+end-off > l.max {
			at := off + l.max - l.n // the first byte past the cap
			l.mu.Lock()
			l.err = &MessageTooLargeError{Max: l.max}
			l.mu.Unlock()
			l.over()
			return at, l.err
		}
		if end == n {
			l.n += end - off
			break
		}
		l.n, off = 0, end+1
	}
	return n, err
}

// exceeded is the error once the cap was passed, nil before.
func (l *lineLimit) exceeded() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		return nil
	}
	return l.err
}
