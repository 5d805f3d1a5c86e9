package upstream

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Backoff of restarts: the first after about restartBase, doubling up to
// restartMax, each delay drawn from its upper half (jitter, so that
// upstreams that died together do not restart together). A process that
// lived restartStable or longer starts the series again.
const (
	restartBase   = time.Second
	restartMax    = time.Minute
	restartStable = time.Minute
)

type backoff struct{ attempt int }

func newBackoff() backoff { return backoff{} }

// next is the delay before the next restart, after a process that lived
// for lived.
func (b *backoff) next(lived time.Duration) time.Duration {
	if lived >= restartStable {
		b.attempt = 0
	}
	d := min(restartBase<<min(b.attempt, 16), restartMax)
	b.attempt++
	return d/2 + rand.N(d/2+1)
}

// Outage says why an upstream is down and when it is tried again.
type Outage struct {
	Reason  string
	Since   time.Time
	RetryAt time.Time
}

func (o *Outage) Error() string {
	return fmt.Sprintf("down since %s: %s; the next restart is at %s", o.Since.Format(time.TimeOnly), o.Reason, o.RetryAt.Format(time.TimeOnly))
}

// The kinds of Event.
const (
	// EventDown: the process ended; Reason says how, RetryAt when it is
	// started again.
	EventDown = "down"
	// EventRestartFailed: a restart failed; RetryAt is the next.
	EventRestartFailed = "restart_failed"
	// EventRestarted: the upstream serves again; its tools are listed
	// again (OnToolsChanged).
	EventRestarted = "restarted"
	// EventRequestRefused: the upstream sent a request of its own
	// (Reason is its method: sampling, elicitation, roots), refused.
	EventRequestRefused = "request_refused"
	// EventMessageRefused: a url upstream over streamable HTTP sent a
	// message over the cap (Reason), cut unread; its session goes on.
	EventMessageRefused = "message_refused"
)

// Event is a change of an upstream's state, for the log and the audit.
type Event struct {
	Upstream, Kind, Reason string
	RetryAt                time.Time
	// TooLarge is set when the process was killed for a message over
	// the cap.
	TooLarge bool
}

// OnEvent calls f with each change of the upstream's state.
func (c *Conn) OnEvent(f func(Event)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, f)
}

func (c *Conn) emit(e Event) {
	e.Upstream = c.cfg.Name
	c.mu.Lock()
	fs := c.events
	c.mu.Unlock()
	for _, f := range fs {
		f(e)
	}
}

// session is the live session, or the outage when there is none.
func (c *Conn) session() (*session, *Outage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil {
		return c.cur, nil
	}
	if c.down != nil {
		o := *c.down
		return nil, &o
	}
	return nil, &Outage{Reason: "closed", Since: time.Now(), RetryAt: time.Now()}
}

// watch restarts the upstream when s's process ends.
func (c *Conn) watch(s *session) {
	done := s.done()
	if done == nil {
		return
	}
	s.started = time.Now()
	go func() {
		select {
		case <-done:
			c.ended(s)
		case <-c.stop:
		}
	}()
}

// ended marks the upstream down and schedules its restart.
func (c *Conn) ended(s *session) {
	c.mu.Lock()
	if c.closed || c.cur != s {
		c.mu.Unlock()
		return
	}
	c.cur = nil
	now := time.Now()
	delay := c.backoff.next(now.Sub(s.started))
	c.down = &Outage{Reason: s.reason(), Since: now, RetryAt: now.Add(delay)}
	e := Event{Kind: EventDown, Reason: c.down.Reason, RetryAt: c.down.RetryAt, TooLarge: s.tooLarge()}
	c.mu.Unlock()
	s.close()
	c.emit(e)
	go c.restart(delay)
}

// restart starts the upstream again after delay, and again with backoff
// until it serves or the Conn is closed; then its tools are listed again.
func (c *Conn) restart(delay time.Duration) {
	for {
		select {
		case <-c.stop:
			return
		case <-time.After(delay):
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout())
		s, err := c.open(ctx)
		cancel()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			if s != nil {
				s.close()
			}
			return
		}
		if err == nil {
			c.cur, c.down = s, nil
			c.mu.Unlock()
			c.watch(s)
			c.emit(Event{Kind: EventRestarted})
			c.toolsChanged()
			return
		}
		delay = c.backoff.next(0)
		c.down.Reason = "restart failed: " + err.Error()
		c.down.RetryAt = time.Now().Add(delay)
		e := Event{Kind: EventRestartFailed, Reason: c.down.Reason, RetryAt: c.down.RetryAt}
		c.mu.Unlock()
		c.emit(e)
	}
}

// unavailable is the answer to a call while the upstream is down.
func unavailable(upstream string, o *Outage) *toolerr.Error {
	return toolerr.New(toolerr.BackendUnavailable,
		fmt.Sprintf("The upstream server is restarting; try again after %s.", o.RetryAt.Format(time.TimeOnly)),
		"upstream %q is unavailable: %s (in %s)", upstream, o.Error(), time.Until(o.RetryAt).Round(time.Second))
}
