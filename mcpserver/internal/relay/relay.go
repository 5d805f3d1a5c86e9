// Package relay writes the notifications one request's handler sends
// (progress, log messages) in the order sent, and says when every one
// sent so far is written, so that the request's answer goes after them.
//
// Most calls send none: the channel and the goroutine that writes what
// arrives on it are made at the handler's first send (mcp-go asks the
// session for its notification channel only to send on it), so a call
// that sends nothing costs neither, nor the scheduler's hand-off of
// stopping a goroutine before its answer.
package relay

import (
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Buffer is how many notifications may wait to be written, as many as
// mcp-go's session channel holds; past it, the sender gets mcp-go's
// ErrNotificationChannelBlocked.
const Buffer = 100

// Relay is one request's notification channel and its writer.
type Relay struct {
	write func(mcp.JSONRPCNotification)

	mu           sync.Mutex // over the fields below
	ch           chan mcp.JSONRPCNotification
	stop, exited chan struct{} // nil until the writer starts
	finished     bool
}

// New returns a relay that writes each notification with write.
func New(write func(mcp.JSONRPCNotification)) *Relay {
	return &Relay{write: write}
}

// Channel is the request's notification channel (a session's
// NotificationChannel). The first call makes it and starts its writer;
// after Finish, what is sent there is not written (the request is
// answered), as when a session's channel has no reader.
func (r *Relay) Channel() chan<- mcp.JSONRPCNotification {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan mcp.JSONRPCNotification, Buffer)
		if !r.finished {
			r.stop, r.exited = make(chan struct{}), make(chan struct{})
			go r.run(r.ch, r.stop, r.exited)
		}
	}
	return r.ch
}

// run writes what arrives on ch until stop; then what is still waiting.
func (r *Relay) run(ch <-chan mcp.JSONRPCNotification, stop <-chan struct{}, exited chan<- struct{}) {
	defer close(exited)
	for {
		select {
		case n := <-ch:
			r.write(n)
		case <-stop:
			for {
				select {
				case n := <-ch:
					r.write(n)
				default:
					return
				}
			}
		}
	}
}

// Finish returns once every notification sent so far is written, and
// ends the writer. It is called before the answer is written: the
// handler has returned, so all it sent is on the channel or written. It
// may be called more than once.
func (r *Relay) Finish() {
	r.mu.Lock()
	stop, exited, first := r.stop, r.exited, !r.finished
	r.finished = true
	r.mu.Unlock()
	if stop == nil {
		return
	}
	if first {
		close(stop)
	}
	<-exited
}
