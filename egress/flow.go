package egress

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// errCut is what a flow's reads and writes return once a limit cut it.
var errCut = errors.New("egress: connection cut by a limit")

// flow is one connection from the sandbox: the client side, metered
// against the call's byte budgets, and the upstream connection it leads
// to, closed together.
type flow struct {
	net.Conn
	c      *Call
	ev     Event
	ctx    context.Context
	cancel context.CancelFunc

	up, down atomic.Int64
	last     atomic.Int64 // unix nanoseconds of the last byte either way

	mu       sync.Mutex
	upstream net.Conn
	rule     string // the limit that cut it
	closed   bool
}

type flowKey struct{}

func newFlow(c *Call, raw net.Conn) *flow {
	ctx, cancel := context.WithCancel(c.ctx)
	f := &flow{Conn: raw, c: c, cancel: cancel, ev: Event{CallID: c.id, Start: time.Now()}}
	f.ctx = context.WithValue(ctx, flowKey{}, f)
	f.touch()
	return f
}

func (f *flow) touch()                { f.last.Store(time.Now().UnixNano()) }
func (f *flow) lastActive() time.Time { return time.Unix(0, f.last.Load()) }

// Read is what the sandbox sends, spent from the call's upload budget.
func (f *flow) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	if n > 0 {
		f.touch()
		m := take(&f.c.upLeft, n)
		f.up.Add(int64(m))
		if m < n {
			f.cut(RuleMaxBytesUp)
			return m, errCut
		}
	}
	return n, err
}

// Write is what the sandbox receives, spent from the download budget.
func (f *flow) Write(p []byte) (int, error) {
	m := take(&f.c.downLeft, len(p))
	n, err := f.Conn.Write(p[:m])
	f.down.Add(int64(n))
	f.touch()
	if err == nil && m < len(p) {
		f.cut(RuleMaxBytesDown)
		return n, errCut
	}
	return n, err
}

// setUpstream ties conn's life to the flow's.
func (f *flow) setUpstream(conn net.Conn) {
	f.mu.Lock()
	f.upstream = conn
	closed := f.closed
	f.mu.Unlock()
	if closed {
		conn.Close()
	}
}

// cut closes the flow because of rule; the first rule is the one kept.
func (f *flow) cut(rule string) {
	f.mu.Lock()
	if f.rule == "" && !f.closed {
		f.rule = rule
	}
	f.mu.Unlock()
	f.Close()
}

// isCut says whether a limit cut the flow.
func (f *flow) isCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rule != ""
}

// Close closes both sides.
func (f *flow) Close() error {
	f.mu.Lock()
	f.closed = true
	up := f.upstream
	f.mu.Unlock()
	f.cancel()
	if up != nil {
		up.Close()
	}
	return f.Conn.Close()
}

// refuse answers the sandbox with the refusal and records it.
func (f *flow) refuse(err error) {
	f.ev.Allowed = false
	f.ev.Rule = ruleOf(err, RuleDial)
	f.ev.Finding = findingOf(err)
	writeRefusal(f, err)
}

// noteAddr records the address a flow's request was sent to.
func noteAddr(ctx context.Context, addr string) {
	if f, ok := ctx.Value(flowKey{}).(*flow); ok {
		f.mu.Lock()
		f.ev.Addr = addr
		f.mu.Unlock()
	}
}
