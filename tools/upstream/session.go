package upstream

import (
	"context"
	"errors"
	"fmt"
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
	proc    *proc
	started time.Time
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
	return err
}

// errEnded is the error of a request whose session ended under it.
var errEnded = errors.New("the upstream's connection ended")

// explain adds to err why the session's process ended, when it did: a
// request cut short by the end of the process says what ended it.
func (s *session) explain(err error) error {
	if s.proc == nil || !errors.Is(err, transport.ErrTransportClosed) {
		return err
	}
	select {
	case <-s.proc.done:
	case <-time.After(2 * time.Second): // the exit status follows the end of stdout closely
	}
	return fmt.Errorf("%w: %s", errEnded, s.proc.reason())
}
