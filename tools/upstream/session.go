package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// session is one connection to an upstream: for a command upstream, one
// run of its process.
type session struct {
	t      transport.Interface
	client *client.Client
	rec    *recorder
	// proc is the session's process, nil for a url upstream.
	proc *proc
	// calls answers callTool's requests on stdio, nil over HTTP.
	calls *stdioCalls
	// meta is the _meta envelope each request carries when the upstream
	// speaks 2026-07-28 or later (mcp-go's client adds it to its own
	// requests; callTool's go past it), nil for earlier revisions.
	meta map[string]any
	// metaLine is meta as JSON, encoded once (metaJSON).
	metaOnce sync.Once
	metaLine []byte
	metaErr  error
	// cap is what became of a url upstream's messages over the cap, nil
	// for a command upstream.
	cap     *urlCap
	started time.Time
}

// done is closed when the session ended under toolwarden: its process
// ended, or its event stream was cut at the message cap. Nil (never) for
// a session that only Close ends.
func (s *session) done() <-chan struct{} {
	switch {
	case s.proc != nil:
		return s.proc.done
	case s.cap != nil && s.cap.sse:
		return s.cap.cut
	}
	return nil
}

// reason says why the session ended, once done is closed.
func (s *session) reason() string {
	if e := s.cap.ended(); e != nil {
		return e.Error()
	}
	if s.proc != nil {
		return s.proc.reason()
	}
	return "its connection ended"
}

// tooLarge reports whether the session ended at the message cap.
func (s *session) tooLarge() bool {
	return s.cap.ended() != nil || (s.proc != nil && s.proc.limit.exceeded() != nil)
}

// A dialer makes a new session's transport (and process), not started.
type dialer func(ctx context.Context) (*session, error)

// close ends the session and kills its process.
func (s *session) close() error {
	var err error
	if s.client != nil {
		err = s.client.Close()
	} else if s.t != nil {
		err = s.t.Close()
	}
	if s.proc != nil {
		s.proc.stop()
	}
	if s.calls != nil {
		s.calls.close()
	}
	return err
}

// errEnded is the error of a request whose session ended under it.
var errEnded = errors.New("the upstream's connection ended")

// explain adds to err why the session's process ended, when it did: a
// request cut short by the end of the process says what ended it.
func (s *session) explain(err error) error {
	if e := s.cap.ended(); e != nil {
		return fmt.Errorf("%w: %w", errEnded, e)
	}
	if s.proc == nil || !errors.Is(err, transport.ErrTransportClosed) {
		return err
	}
	select {
	case <-s.proc.done:
	case <-time.After(2 * time.Second): // the exit status follows the end of stdout closely
	}
	return fmt.Errorf("%w: %s", errEnded, s.proc.reason())
}
