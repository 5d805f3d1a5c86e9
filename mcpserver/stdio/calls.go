package stdio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/toolwarden/toolwarden/internal/rpcerr"
	"github.com/toolwarden/toolwarden/mcpserver/internal/wire"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// toolCalls serves a stdio connection's tools/call requests in place of
// mcp-go's stdio server, which would re-read each request three times
// more (as a message, for its method, as a possible answer to the
// server) and encode each answer twice. The lineFilter hands the
// request over once checked; mcp-go's MCPServer still answers it
// (HandleMessage: the same handlers, middleware and guard, the same
// cancellation), on the session's context; only the reading and the
// encoding of the answer are done here (wire.WriteAnswer). Like mcp-go's,
// a few workers take the calls from a bounded queue and a call that
// finds the queue full is served on the reading goroutine. A call that
// comes while no other is being served is served where it was read
// (here.go): no hand-over to a worker, which wakes another thread.
//
// A worker may run the call's handler itself (the server's runInPlace,
// given the call's Turn); should the handler outlive the call's deadline,
// a stand-in answers the call and starts a worker in its place
// (Turn.StandIn), and the stuck one ends when its handler returns.
type toolCalls struct {
	srv    *server.MCPServer
	out    io.Writer // the gate: one Write per message
	errLog *log.Logger

	ctx    context.Context // the stdio session's, set by sessionContext
	cancel context.CancelFunc
	queue  chan queuedCall
	// wg counts the workers' places: a worker that hands its place to a
	// stand-in's new worker leaves it counted.
	wg sync.WaitGroup
	// listens counts the subscriptions/listen requests being served.
	listens sync.WaitGroup
	// serving counts the calls being served, queued or here, until
	// answered (by their handler or a stand-in).
	serving atomic.Int32
	// here counts the calls served where they were read, until answered.
	here sync.WaitGroup
	// closing orders close after the requests counted or queued (admit).
	closing sync.RWMutex
	closed  bool
}

// queuedCall is a tools/call request and its id as sent.
type queuedCall struct {
	req json.RawMessage
	id  jsontext.Value
}

// The worker pool and queue sizes of mcp-go's stdio server (its defaults,
// which Serve used).
const (
	callWorkers = 5
	callQueue   = 100
)

func newToolCalls(srv *server.MCPServer, out io.Writer, errLog *log.Logger) *toolCalls {
	return &toolCalls{srv: srv, out: out, errLog: errLog, queue: make(chan queuedCall, callQueue)}
}

// sessionContext is mcp-go's stdio context hook: it is handed the
// session's context (the stdio client session attached) before the first
// line is read, keeps it for the calls, and starts the workers.
func (c *toolCalls) sessionContext(ctx context.Context) context.Context {
	c.ctx, c.cancel = context.WithCancel(wire.AsJSON(ctx))
	c.wg.Add(callWorkers)
	for range callWorkers {
		go c.work()
	}
	return ctx
}

// serve serves a tools/call request read by the reading loop: where it
// was read when no other call is being served (serveHere, which returns
// whether the reading went on elsewhere meanwhile), else on a worker. A call that
// finds the worker queue full is served now (which holds the next line
// back, as mcp-go does), its handler on a handler goroutine
// (runWithDeadline), so that a handler that outlives its deadline cannot
// hold the reading back.
func (c *toolCalls) serve(req json.RawMessage, id jsontext.Value, r reading) (handedOver bool) {
	if !c.admit() {
		c.answerEnded(id)
		return false
	}
	if c.serving.Add(1) == 1 {
		c.here.Add(1)
		c.closing.RUnlock()
		return c.serveHere(req, id, r)
	}
	select {
	case c.queue <- queuedCall{req, id}:
		c.closing.RUnlock()
	default:
		c.closing.RUnlock()
		c.errLog.Printf("Tool call queue full, processing synchronously")
		c.answer(c.ctx, req)
		c.serving.Add(-1)
	}
	return false
}

// admit holds close back (a read lock on closing) while a request is
// counted or queued, unless the session has ended already, and reports
// which: the reading may outlive Listen, which returns when its context
// ends.
func (c *toolCalls) admit() bool {
	c.closing.RLock()
	if c.closed {
		c.closing.RUnlock()
		return false
	}
	return true
}

// answerEnded answers the request id, read after the session ended
// (endedAnswer).
func (c *toolCalls) answerEnded(id jsontext.Value) {
	if _, err := c.out.Write(append(endedAnswer(id), '\n')); err != nil {
		c.errLog.Printf("Error writing the answer to a request after the session ended: %v", err)
	}
}

// listen serves a subscriptions/listen request on a goroutine of its own
// (it holds until cancelled or the input ends) as a call is served: its
// acknowledgement goes to the request's own session, and so is written
// before its answer. mcp-go's stdio server wrote the two from two
// goroutines, and a listen answered at once (it subscribed to nothing the
// server offers) sometimes had its acknowledgement second.
func (c *toolCalls) listen(req json.RawMessage, id jsontext.Value) {
	if !c.admit() {
		c.answerEnded(id)
		return
	}
	c.listens.Add(1)
	c.closing.RUnlock()
	go func() {
		defer c.listens.Done()
		c.answer(c.ctx, req)
	}()
}

// work serves queued calls until the queue closes, or until a stand-in
// has taken this worker's place.
func (c *toolCalls) work() {
	for call := range c.queue {
		turn := &Turn{Context: c.ctx, calls: c, id: call.id}
		c.answer(turn, call.req)
		if turn.took.Load() {
			return // the place is the stand-in's worker's now
		}
		c.serving.Add(-1)
	}
	c.wg.Done()
}

// close ends the calls once input has ended: their context is cancelled,
// as mcp-go's are, and the workers are waited for.
func (c *toolCalls) close() {
	if c.cancel == nil {
		return // never started: Listen failed before reading
	}
	c.cancel()
	c.closing.Lock()
	c.closed = true
	close(c.queue)
	c.closing.Unlock()
	c.wg.Wait()
	c.here.Wait()
	c.listens.Wait()
}

// answer has mcp-go answer req and writes the answer, unless a stand-in
// answered it already.
func (c *toolCalls) answer(ctx context.Context, req json.RawMessage) {
	withSlot, rpc := rpcerr.WithSlot(ctx)
	related, written := c.relate(withSlot)
	if turn, ok := ctx.(*Turn); ok {
		turn.finish = written // a stand-in's answer goes after them too
	}
	msg := c.handle(related, req)
	written() // the call's notifications go before its answer (related.go)
	if turn, ok := ctx.(*Turn); ok && turn.took.Load() {
		return
	}
	if msg != nil {
		c.write(withError(msg, rpc()))
	}
}

// withError is msg, an answer, with e in place of its result or error
// when the handler chose e (rpcerr.Answer).
func withError(msg mcp.JSONRPCMessage, e *rpcerr.Error) mcp.JSONRPCMessage {
	if e == nil {
		return msg
	}
	switch m := msg.(type) {
	case mcp.JSONRPCResponse:
		return mcp.NewJSONRPCError(m.ID, e.Code, e.Message, e.Data)
	case mcp.JSONRPCError:
		return mcp.NewJSONRPCError(m.ID, e.Code, e.Message, e.Data)
	}
	return msg
}

// write writes msg, one answer.
func (c *toolCalls) write(msg mcp.JSONRPCMessage) {
	buf := wire.Buffer()
	defer wire.PutBuffer(buf)
	if err := wire.WriteAnswer(buf, msg); err != nil {
		c.errLog.Printf("Error writing tool response: %v", err)
		return
	}
	buf.WriteByte('\n')
	if _, err := c.out.Write(buf.Bytes()); err != nil {
		c.errLog.Printf("Error writing tool response: %v", err)
	}
}

// handle runs HandleMessage, a panic turned into the INTERNAL_ERROR answer
// mcp-go's worker would give.
func (c *toolCalls) handle(ctx context.Context, req json.RawMessage) (msg mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			c.errLog.Printf("panic recovered in stdio tool call worker: %v", r)
			var head struct {
				ID mcp.RequestId `json:"id"`
			}
			_ = json.Unmarshal(req, &head)
			msg = mcp.NewJSONRPCError(head.ID, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r), nil)
		}
	}()
	return c.srv.HandleMessage(ctx, req)
}

// Turn is the context of one call a stdio worker serves: the session's,
// and the means to answer the call in the worker's place. It lets the
// server run the call's handler on the worker itself, the one hook the
// transport offers the server (mcpserver's runInPlace). A Turn made with
// only its Context answers nobody: a benchmark's.
type Turn struct {
	context.Context
	calls *toolCalls // nil: nobody to answer (a benchmark)
	id    jsontext.Value
	// took is set once a stand-in has answered the call; running while
	// a handler runs in place, so that a call made from inside it (with
	// its context) takes a handler goroutine rather than this turn.
	took, running atomic.Bool
	// finish returns once the call's notifications sent so far are
	// written, and lets none be written after (the call's relay); set
	// before the handler runs, nil for a Turn that answers nobody.
	finish func()
	// here is set for a call served where it was read (here.go).
	here *servedHere
}

// turnKey finds a call's Turn among its context's values.
type turnKey struct{}

func (t *Turn) Value(key any) any {
	if key == (turnKey{}) {
		return t
	}
	return t.Context.Value(key)
}

// TurnOf returns the Turn of a call a stdio worker serves, if its
// handler may run in place: no stand-in has answered the call, and no
// handler runs in place already. The caller then owns it until it
// calls Release or StandIn.
func TurnOf(ctx context.Context) (*Turn, bool) {
	t, ok := ctx.Value(turnKey{}).(*Turn)
	return t, ok && !t.took.Load() && t.running.CompareAndSwap(false, true)
}

// Release gives the turn back once a handler run in place has returned in
// time (mcp-go may run the handler again, with the client's answers).
func (t *Turn) Release() { t.running.Store(false) }

// StandIn answers the call with res, as mcp-go would have (the id as it
// reads it), after the notifications its handler sent so far and before
// any it sends later (which are not written), and starts a worker in the
// place of the one still running the call's handler (or, for a call
// served where it was read, has the reading go on elsewhere).
func (t *Turn) StandIn(res *mcp.CallToolResult) {
	t.took.Store(true)
	if t.calls == nil {
		return
	}
	if t.finish != nil {
		t.finish() // what the handler sent so far goes first, nothing after
	}
	var id any
	_ = json.Unmarshal(t.id, &id)
	t.calls.write(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), res))
	t.calls.serving.Add(-1)
	if t.here != nil {
		t.here.handOver()
		t.calls.here.Done()
		return
	}
	go t.calls.work()
}
