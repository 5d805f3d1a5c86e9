package mcpserver

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/guard"
	"github.com/toolwarden/toolwarden/internal/toolerr"
)

// Defaults of limits.timeout_grace and limits.max_abandoned for a server
// built without a config (New); Build sets the configured values.
const (
	defaultTimeoutGrace = 2 * time.Second
	defaultMaxAbandoned = 4
)

// lateCalls keeps the audit log truthful about calls that outlive their
// deadline. A Go handler cannot be stopped, only asked to stop through
// its context; one that does not listen may still act after the model was
// told the call timed out. So the server waits a grace period for it,
// audits how it ended, and counts per identity the handlers it had to
// leave running, refusing new calls while too many are.
type lateCalls struct {
	grace time.Duration
	max   int
	log   *slog.Logger

	mu        sync.Mutex
	abandoned map[string]int // by guard.Call.LimitKey
}

func newLateCalls(grace time.Duration, maxAbandoned int, log *slog.Logger) *lateCalls {
	return &lateCalls{grace: grace, max: maxAbandoned, log: log, abandoned: map[string]int{}}
}

// SetLateCalls sets how long a call past its deadline is still waited for
// (limits.timeout_grace) and how many abandoned calls of one identity may
// still run before its new calls are refused (limits.max_abandoned).
func (s *Server) SetLateCalls(grace time.Duration, maxAbandoned int) {
	s.late = newLateCalls(grace, maxAbandoned, s.log)
}

// handlerReturn is what a tool handler returned.
type handlerReturn struct {
	res *mcp.CallToolResult
	err error
}

// code is the error code of what the handler returned, "" for a success.
func (r handlerReturn) code() toolerr.Code {
	if r.err != nil {
		return toolerr.CodeOf(r.err)
	}
	return toolerr.ErrorCode(r.res)
}

// stopped reports whether the handler gave up because its context ended.
// Handlers that honour the context (the file tools check it before they
// commit a change) then changed nothing.
func (r handlerReturn) stopped() bool {
	c := r.code()
	return c == toolerr.Timeout || c == toolerr.Canceled
}

// admit refuses a call of an identity that has max abandoned handlers
// still running.
func (l *lateCalls) admit(key string) *toolerr.Error {
	l.mu.Lock()
	n := l.abandoned[key]
	l.mu.Unlock()
	if n < l.max {
		return nil
	}
	return toolerr.New(toolerr.Abandoned,
		"Wait for the earlier calls to end (their ends are audited) and check what they did before retrying; or ask the operator to raise limits.max_abandoned or the call timeouts.",
		"%d calls of this client outlived their deadline and are still running; limits.max_abandoned is %d", n, l.max).WithRule("limits.max_abandoned")
}

// settle ends a call whose deadline passed (or which the client
// cancelled) while its handler ran: it waits up to the grace period for
// the handler and ends the ticket with what truly happened. stop is the
// error the deadline or the cancellation gives the model.
func (l *lateCalls) settle(t *guard.Ticket, key string, done <-chan handlerReturn, stop *toolerr.Error) *mcp.CallToolResult {
	timer := time.NewTimer(l.grace)
	defer timer.Stop()
	select {
	case r := <-done:
		return endLate(t, r, stop)
	case <-timer.C:
	}
	l.mu.Lock()
	l.abandoned[key]++
	l.mu.Unlock()
	go l.await(t, key, done)
	return t.Abandon(toolerr.New(stop.Code,
		strings.TrimSpace("The call may still complete: check what it did (e.g. read the file) before retrying. "+stop.Hint),
		"%s; it was still running %s later and was left running: it may yet complete, and its end will be audited", stop.Message, l.grace).WithRule(stop.Rule))
}

// endLate ends the ticket of a call whose handler returned r after the
// call's context ended: a handler stopped by it failed with stop, any
// other end is completed_late with what it returned.
func endLate(t *guard.Ticket, r handlerReturn, stop *toolerr.Error) *mcp.CallToolResult {
	if r.stopped() {
		return t.Finish(nil, stop)
	}
	return t.FinishLate(r.res, r.err)
}

// await writes the audit line of an abandoned handler when it returns.
// The count drops first, so that once the line is there the identity may
// call again.
func (l *lateCalls) await(t *guard.Ticket, key string, done <-chan handlerReturn) {
	r := <-done
	l.mu.Lock()
	if l.abandoned[key]--; l.abandoned[key] <= 0 {
		delete(l.abandoned, key)
	}
	l.mu.Unlock()
	outcome := guard.OutcomeCompletedLate
	if r.stopped() {
		outcome = guard.OutcomeFailed
	}
	if err := t.EndAbandoned(outcome, r.code()); err != nil {
		l.log.Error("the end of an abandoned call could not be audited", "error", err)
	}
}
